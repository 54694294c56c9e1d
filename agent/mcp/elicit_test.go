package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/agent/mcp"
	"github.com/kindkit/kindkit/gen/elicitationgen"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/internal/wstest"
	"github.com/kindkit/kindkit/kinds/elicitation"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
)

// signUp is a go-sdk MCP server whose sign_up tool asks the person for a
// name and an email by elicitation, and says what it got; each answer's
// action also goes to actions when it is set.
func signUp(t *testing.T, actions chan<- string) *httptest.Server {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "desk", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "sign_up", Description: "Signs the person up."}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		// go-sdk's server session waits for this handler when its client
		// goes away; bounded, a test that fails ends.
		ctx, cancel := context.WithTimeout(ctx, wstest.Timeout)
		defer cancel()
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Who should we sign up?", RequestedSchema: json.RawMessage(
			`{"type":"object","required":["name"],"properties":{"name":{"type":"string","title":"Name","minLength":1},"email":{"type":"string","format":"email"}}}`)})
		if err != nil {
			return nil, nil, err
		}
		if actions != nil {
			actions <- res.Action
		}
		text := res.Action
		if res.Action == "accept" {
			text = fmt.Sprintf("signed up %v <%v>", res.Content["name"], res.Content["email"])
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil, nil
	})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs
}

// kindkit is a kindkit server whose model calls desk__sign_up, then says
// "done", with the MCP server at url as a tool source.
type kindkit struct {
	*servertest.Server
	desk *mcp.Server
}

func startKindkit(t *testing.T, url string, st store.Store, clock clockwork.Clock, script ...agent.ScriptEntry) *kindkit {
	t.Helper()
	desk, err := mcp.Start(context.Background(), mcp.Source{Name: "desk", URL: url, Ask: &mcp.CardKind{Name: elicitationgen.Name, Spec: elicitation.MCPSpec, URLSpec: elicitation.MCPURLSpec}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if script == nil {
		script = []agent.ScriptEntry{{Kind: "toolCall", Name: "desk__sign_up", Arguments: `{}`, ID: "call-1"}, {Kind: "text", Text: "done"}}
	}
	model, err := agent.NewScripted(script)
	if err != nil {
		t.Fatal(err)
	}
	srv := servertest.Start(t, servertest.Config{Model: model, Store: st, ToolSets: []agent.ToolSet{desk},
		Clock: clock, ParkTimeout: time.Hour, KeepParksOnDrain: true}, nil)
	t.Cleanup(func() { desk.Close() })
	return &kindkit{srv, desk}
}

// elicited opens a session that can show the card, sends a message and
// returns the card's event.
func elicited(t *testing.T, k *kindkit) (c *wstest.Client, sid string, card map[string]any) {
	t.Helper()
	c = wstest.Dial(t, k.WS())
	c.Send(`{"action":"create_conversation_session","requestId":"c","agentId":"a","supports":["mcp_elicitation"]}`)
	ack := c.Expect("immediate_response")[0]
	sid = wstest.Path(ack, "data", "sessionId").(string)
	card = map[string]any{"conversationId": wstest.Path(ack, "data", "conversationId")}
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"sign me up"}`)
	c.Expect("immediate_response")
	for {
		ev := c.Next()
		if ev["type"] == "interaction_required" {
			card["data"] = wstest.Path(ev, "data", "data")
			return c, sid, card
		}
		if ev["type"] != "stream_chunk" {
			t.Fatalf("got %v, want the card", ev)
		}
	}
}

// toolResult reads the resumed turn to its end and returns the result of
// the MCP tool's call.
func toolResult(t *testing.T, c *wstest.Client) string {
	t.Helper()
	var result string
	for {
		ev := c.Next()
		switch ev["type"] {
		case "stream_chunk":
			if r, ok := wstest.Path(ev, "data", "state", "rawResponse", "toolResult", "result").(string); ok {
				result = r
			}
		case "stream_token", "immediate_response":
		case "eventual_response":
			return result
		default:
			t.Fatalf("got %v while the turn finished", ev)
		}
	}
}

func submit(c *wstest.Client, sid, iid, body string) {
	c.Send(`{"action":"submit_interaction","requestId":"s","sessionId":"` + sid + `","interactionId":"` + iid + `","kind":"elicitation",` + body + `}`)
}

// TestElicitationCard: the server's question is a card of the elicitation
// kind; an answer its schema refuses is interaction_invalid and the card
// stays; a good one goes back to the server as accept, a decline as
// decline, and the deadline as cancel.
func TestElicitationCard(t *testing.T) {
	url := signUp(t, nil).URL
	t.Run("accept", func(t *testing.T) {
		c, sid, card := elicited(t, startKindkit(t, url, nil, nil))
		data := wstest.Path(card, "data").(map[string]any)
		if data["kind"] != "elicitation" || wstest.Path(data, "spec", "message") != "Who should we sign up?" ||
			wstest.Path(data, "spec", "server") != "desk" || wstest.Path(data, "spec", "requestedSchema", "properties", "email", "format") != "email" {
			t.Fatalf("card %v", data)
		}
		iid := data["interactionId"].(string)
		submit(c, sid, iid, `"values":{"name":"Ada","email":"not an email"}`)
		if ev := c.Next(); ev["type"] != "interaction_invalid" || !strings.Contains(fmt.Sprint(ev), "email") {
			t.Fatalf("a bad email: %v, want interaction_invalid on email", ev)
		}
		submit(c, sid, iid, `"values":{"name":"Ada","email":"ada@example.com"}`)
		if r := toolResult(t, c); r != "signed up Ada <ada@example.com>" {
			t.Errorf("tool result %q", r)
		}
	})
	t.Run("decline", func(t *testing.T) {
		c, sid, card := elicited(t, startKindkit(t, url, nil, nil))
		submit(c, sid, wstest.Path(card, "data", "interactionId").(string), `"declined":true`)
		if r := toolResult(t, c); r != "decline" {
			t.Errorf("tool result %q, want decline", r)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		clock := clockwork.NewFakeClock()
		k := startKindkit(t, url, nil, clock)
		c, _, _ := elicited(t, k)
		clock.Advance(2 * time.Hour)
		if r := toolResult(t, c); r != "cancel" {
			t.Errorf("tool result %q, want cancel", r)
		}
	})
}

// TestElicitationInWords: a channel that cannot show the card gets the
// kind's conversational directive as the call's result; the model's
// submit_interaction of the answer goes to the waiting server, and the
// server's words become submit_interaction's result.
func TestElicitationInWords(t *testing.T) {
	k := startKindkit(t, signUp(t, nil).URL, nil, nil,
		agent.ScriptEntry{Kind: "toolCall", Name: "desk__sign_up", Arguments: `{}`, ID: "call-1"},
		agent.ScriptEntry{Kind: "toolCall", Name: "submit_interaction", ID: "call-2",
			Arguments: `{"kind":"elicitation","values":{"name":"Ada","email":"ada@example.com"}}`},
		agent.ScriptEntry{Kind: "text", Text: "done"})
	results := inWords(t, k.WS(), "sign me up")
	if len(results) != 2 || !strings.Contains(results[0], "Who should we sign up?") || results[1] != "signed up Ada <ada@example.com>" {
		t.Errorf("tool results %q, want the directive, then the server's words", results)
	}
}

// TestElicitationWithdrawn: the person writes instead of answering; the
// card is withdrawn and the server's question is cancelled at once, not
// left waiting for the deadline.
func TestElicitationWithdrawn(t *testing.T) {
	actions := make(chan string, 1)
	c, sid, card := elicited(t, startKindkit(t, signUp(t, actions).URL, nil, nil))
	iid := wstest.Path(card, "data", "interactionId").(string)
	c.Send(`{"action":"send_message","requestId":"U","sessionId":"` + sid + `","message":"never mind","withdrawInteraction":"` + iid + `"}`)
	select {
	case a := <-actions:
		if a != "cancel" {
			t.Errorf("the server's question ended %q, want cancel", a)
		}
	case <-time.After(wstest.Timeout):
		t.Fatal("the server's question still waits after the card was withdrawn")
	}
}

// TestElicitationLostWithRestart: kindkit restarts while the question
// waits. The MCP call died with the process, so the returning person is
// not shown a card nobody can answer: the turn goes on at once, and the
// model reads that the question was lost.
func TestElicitationLostWithRestart(t *testing.T) {
	url := signUp(t, nil).URL
	st := memstore.New()
	first := startKindkit(t, url, st, nil)
	c, _, card := elicited(t, first)
	c.WS.CloseNow()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	first.Shutdown(ctx)
	first.desk.Close()
	convID := card["conversationId"]

	second := startKindkit(t, url, st, nil)
	c2 := wstest.Dial(t, second.WS())
	c2.Send(fmt.Sprintf(`{"action":"create_conversation_session","requestId":"c","agentId":"a","conversationId":%q}`, convID))
	c2.Expect("immediate_response")
	if r := toolResult(t, c2); !strings.Contains(r, "was lost") {
		t.Errorf("tool result %q, want the question lost", r)
	}
}

// inWords sends message on a socket that declared no capability, so every
// question goes the conversational way, and returns the turn's tool
// results, in order, once its reply came.
func inWords(t *testing.T, ws, message string) []string {
	t.Helper()
	c := wstest.Dial(t, ws)
	c.Send(`{"action":"create_conversation_session","requestId":"c","agentId":"a"}`)
	sid := wstest.Path(c.Expect("immediate_response")[0], "data", "sessionId").(string)
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"` + message + `"}`)
	c.Expect("immediate_response")
	var results []string
	for {
		ev := c.Next()
		if r, ok := wstest.Path(ev, "data", "state", "rawResponse", "toolResult", "result").(string); ok {
			results = append(results, r)
		}
		if ev["type"] == "eventual_response" {
			return results
		}
		if ev["type"] != "stream_chunk" && ev["type"] != "stream_token" {
			t.Fatalf("got %v", ev)
		}
	}
}
