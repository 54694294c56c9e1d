package scenario_test

import (
	"testing"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/cmd/kindgen/testdata/basic/want/gen/pollgen"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/scenario"
)

// Serve runs a scenario against the catalog it is handed, not kindkit's:
// here the poll kind of kindgen's golden output, which kindkit's catalog
// does not have, joined with kindkit's.
func TestServeCatalog(t *testing.T) {
	poll, err := pollgen.New(pollgen.Unimplemented{})
	if err != nil {
		t.Fatal(err)
	}
	mine, err := kindkit.NewCatalog(poll)
	if err != nil {
		t.Fatal(err)
	}
	builtin, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := kindkit.Join(builtin.Named("kindkit"), mine.Named("test"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Parse("poll.json", []byte(pollScenario))
	if err != nil {
		t.Fatal(err)
	}
	s.Serve(t, scenario.Setup{Catalog: catalog})
}

const pollScenario = `{
  "name": "poll",
  "mockLlmScript": [
    { "kind": "toolCall", "name": "request_poll", "arguments": "{\"prompt\":\"Lunch?\",\"choices\":[{\"id\":\"p\",\"text\":\"Pizza\"},{\"id\":\"s\",\"text\":\"Soup\"}],\"reason\":\"to order\"}" },
    { "kind": "text", "text": "Pizza it is." }
  ],
  "steps": [
    { "send": { "action": "create_conversation_session", "requestId": "r1", "agentId": "a", "supports": ["poll_card"] },
      "expect": [ { "type": "immediate_response", "status": 200, "capture": { "sessionId": "data.sessionId" } } ] },
    { "send": { "action": "send_message", "requestId": "r2", "sessionId": "{{sessionId}}", "message": "lunch" },
      "expect": [
        { "type": "immediate_response", "status": 202 },
        { "type": "interaction_required", "assert": { "data.data.kind": "poll" }, "capture": { "interactionId": "data.data.interactionId" } },
        { "type": "stream_chunk" } ] },
    { "send": { "action": "submit_interaction", "requestId": "r2", "sessionId": "{{sessionId}}", "interactionId": "{{interactionId}}", "kind": "poll", "values": { "choice": "p" } },
      "expect": [
        { "type": "immediate_response", "status": 200 },
        { "type": "stream_chunk", "assert": { "data.state.rawResponse.toolResult.result": "{\"status\":\"submitted\",\"values\":{\"choice\":\"p\"}}" } },
        { "type": "stream_token", "repeat": true, "accumulate": "token", "assertAccumulated": "Pizza it is." },
        { "type": "eventual_response", "status": 200 } ] }
  ]
}`

// Test runs each file of a folder as a subtest.
func TestTestFolder(t *testing.T) {
	all, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	scenario.Test(t, scenario.Setup{Catalog: all}, "../spec/conformance/scenarios")
}
