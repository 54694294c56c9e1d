package scenario_test

import (
	"fmt"

	"github.com/kindkit/kindkit/scenario"
)

func ExampleParse() {
	s, err := scenario.Parse("ping.json", []byte(`{
		"name": "ping",
		"description": "a toolCall entry without an id gets call-1",
		"mockLlmScript": [{"kind": "toolCall", "name": "lookup_order", "arguments": "{}"}],
		"steps": [
			{"send": {"action": "create_conversation_session", "requestId": "r-create", "agentId": "11111111-1111-1111-1111-111111111111"},
			 "expect": [{"type": "immediate_response", "status": 200, "capture": {"sessionId": "data.sessionId"}}]},
			{"send": {"action": "get_session", "requestId": "r-get", "sessionId": "{{sessionId}}"},
			 "expect": [{"type": "immediate_response", "status": 200, "assert": {"message": "OK"}}]}
		]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Name, s.MockLLMScript[0].ID, len(s.Steps), s.Steps[0].Expect[0].Capture["sessionId"])

	_, err = scenario.Parse("bad.json", []byte(`{"name": "bad", "mockLlmScript": [{"kind": "image"}], "steps": []}`))
	fmt.Println(err)
	// Output:
	// ping call-1 2 data.sessionId
	// bad.json: mockLlmScript[0]: unknown kind "image" (want "text" or "toolCall")
}
