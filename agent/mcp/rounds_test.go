package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/agent/mcp"
	"github.com/kindkit/kindkit/gen/elicitationgen"
	"github.com/kindkit/kindkit/internal/mcptest"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/internal/wstest"
	"github.com/kindkit/kindkit/kinds/elicitation"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
)

// startOn is a kindkit server whose model calls tool of the MCP server at
// url (named name), then says "done".
func startOn(t *testing.T, name, url, tool string, st store.Store, clock clockwork.Clock, script ...agent.ScriptEntry) *kindkit {
	t.Helper()
	if script == nil {
		script = []agent.ScriptEntry{{Kind: "toolCall", Name: mcp.ToolName(name, tool), Arguments: `{}`, ID: "call-1"}, {Kind: "text", Text: "done"}}
	}
	src, err := mcp.Start(context.Background(), mcp.Source{Name: name, URL: url, Ask: &mcp.CardKind{Name: elicitationgen.Name, Spec: elicitation.MCPSpec, URLSpec: elicitation.MCPURLSpec}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	model, err := agent.NewScripted(script)
	if err != nil {
		t.Fatal(err)
	}
	if st == nil {
		st = memstore.New()
	}
	srv := servertest.Start(t, servertest.Config{Model: model, Store: st, ToolSets: []agent.ToolSet{src},
		Clock: clock, ParkTimeout: time.Hour, KeepParksOnDrain: true}, nil)
	t.Cleanup(func() { src.Close() })
	return &kindkit{srv, src}
}

// nextCard reads the turn's events up to its next card and returns the
// card's data.
func nextCard(t *testing.T, c *wstest.Client) map[string]any {
	t.Helper()
	for {
		ev := c.Next()
		switch ev["type"] {
		case "interaction_required":
			return wstest.Path(ev, "data", "data").(map[string]any)
		case "stream_chunk", "immediate_response":
		default:
			t.Fatalf("got %v, want a card", ev)
		}
	}
}

// answerCard checks that card asks message (in part) and submits body.
func answerCard(t *testing.T, c *wstest.Client, sid string, card map[string]any, message, body string) {
	t.Helper()
	if card["kind"] != "elicitation" || wstest.Path(card, "spec", "server") != "vouchers" ||
		!strings.Contains(fmt.Sprint(wstest.Path(card, "spec", "message")), message) {
		t.Fatalf("card %v, want the elicitation %q", card, message)
	}
	submit(c, sid, card["interactionId"].(string), body)
}

// TestInputRequired: a 2026-07-28 server asks through its result (two
// questions in one round). Each is a card, in the order of their ids; the
// turn parks as data, so kindkit restarts while the first card waits and
// the restarted process shows it again and takes its answer. The last
// answer calls the tool again with both answers and the request state; a
// wrong code is asked again in a second round, and the right one
// completes the call. The server got one first call, and each request
// state back once.
func TestInputRequired(t *testing.T) {
	vouchers := mcptest.StartVouchers(t)
	st := memstore.New()
	first := startOn(t, "vouchers", vouchers.URL, "redeem", st, nil)
	c, _, card := elicited(t, first)
	if wstest.Path(card, "data", "kind") != "elicitation" || !strings.Contains(fmt.Sprint(wstest.Path(card, "data", "spec", "message")), "Which voucher code") {
		t.Fatalf("first card %v, want the code asked first", card)
	}
	iid := wstest.Path(card, "data", "interactionId")
	c.WS.CloseNow()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	first.Shutdown(ctx)
	first.desk.Close()

	second := startOn(t, "vouchers", vouchers.URL, "redeem", st, nil)
	c = wstest.Dial(t, second.WS())
	c.Send(fmt.Sprintf(`{"action":"create_conversation_session","requestId":"c","agentId":"a","conversationId":%q,"supports":["mcp_elicitation"]}`, card["conversationId"]))
	sid := wstest.Path(c.Expect("immediate_response")[0], "data", "sessionId").(string)
	again := nextCard(t, c)
	if again["interactionId"] != iid {
		t.Fatalf("after the restart: card %v, want the same card %v", again["interactionId"], iid)
	}
	answerCard(t, c, sid, again, "Which voucher code", `"values":{"code":"NOPE"}`)
	answerCard(t, c, sid, nextCard(t, c), "Who is redeeming it?", `"values":{"name":"Ada"}`)
	answerCard(t, c, sid, nextCard(t, c), `"NOPE" is not a valid voucher code`, `"values":{"code":"`+mcptest.VoucherCode+`"}`)
	if r := toolResult(t, c); r != "Redeemed KIND-2026 for Ada." {
		t.Errorf("tool result %q", r)
	}
	if all, repeated := vouchers.Retries(); vouchers.Firsts() != 1 || all != 2 || repeated != 0 {
		t.Errorf("the server got %d first calls and %d retries (%d repeated), want 1 and 2 (none repeated)", vouchers.Firsts(), all, repeated)
	}
}

// TestInputRequiredDeclined: a declined question is MCP's decline and a
// deadline's is cancel, each sent back with the round's other answers; the
// server's words are the result.
func TestInputRequiredDeclined(t *testing.T) {
	vouchers := mcptest.StartVouchers(t)
	t.Run("decline", func(t *testing.T) {
		c, sid, card := elicited(t, startOn(t, "vouchers", vouchers.URL, "redeem", nil, nil))
		answerCard(t, c, sid, card["data"].(map[string]any), "Which voucher code", `"declined":true`)
		answerCard(t, c, sid, nextCard(t, c), "Who is redeeming it?", `"values":{"name":"Ada"}`)
		if r := toolResult(t, c); r != "Nothing redeemed: the code was declined." {
			t.Errorf("tool result %q", r)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		clock := clockwork.NewFakeClock()
		c, _, _ := elicited(t, startOn(t, "vouchers", vouchers.URL, "redeem", nil, clock))
		clock.Advance(2 * time.Hour)
		nextCard(t, c)
		clock.Advance(2 * time.Hour)
		if r := toolResult(t, c); r != "Nothing redeemed: the name was cancelled." {
			t.Errorf("tool result %q", r)
		}
	})
}

// TestInputRequiredInWords: a channel that cannot show the card gets each
// question as the kind's conversational directive; the model's
// submit_interaction answers it, the next question comes the same way,
// and the last answer's retry completes the call, as
// submit_interaction's result.
func TestInputRequiredInWords(t *testing.T) {
	vouchers := mcptest.StartVouchers(t)
	k := startOn(t, "vouchers", vouchers.URL, "redeem", nil, nil,
		agent.ScriptEntry{Kind: "toolCall", Name: "vouchers__redeem", Arguments: `{}`, ID: "call-1"},
		agent.ScriptEntry{Kind: "toolCall", Name: "submit_interaction", ID: "call-2",
			Arguments: `{"kind":"elicitation","values":{"code":"` + mcptest.VoucherCode + `"}}`},
		agent.ScriptEntry{Kind: "toolCall", Name: "submit_interaction", ID: "call-3", Arguments: `{"kind":"elicitation","values":{"name":"Ada"}}`},
		agent.ScriptEntry{Kind: "text", Text: "done"})
	results := inWords(t, k.WS(), "redeem")
	if len(results) != 3 || !strings.Contains(results[0], "Which voucher code") || !strings.Contains(results[1], "Who is redeeming it?") ||
		results[2] != "Redeemed KIND-2026 for Ada." {
		t.Errorf("tool results %q, want the two directives, then the server's words", results)
	}
	if all, _ := vouchers.Retries(); vouchers.Firsts() != 1 || all != 1 {
		t.Errorf("the server got %d first calls and %d retries, want 1 and 1", vouchers.Firsts(), all)
	}
}

// pester is a 2026-07-28 server whose tools never finish well: roots asks
// for the client's roots every time (kindkit answers at once, with none),
// busy answers input_required with nothing to ask, fails fails its retry,
// and sample asks for a sampling, which kindkit did not declare.
func pester(t *testing.T, roots *atomic.Int32) string {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "pester", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "roots"}, func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		if r, ok := req.Params.InputResponses["roots"].(*sdk.ListRootsResult); ok && len(r.Roots) == 0 {
			roots.Add(1)
		}
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"roots": &sdk.ListRootsParams{}}, RequestState: "again"}, nil, nil
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "busy"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{}, RequestState: "later"}, nil, nil
	})
	// fails asks for the roots, then fails the retry: a JSON-RPC error,
	// or with refuse, a tool result that is an error.
	srv.AddTool(&sdk.Tool{Name: "fails", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		switch {
		case req.Params.RequestState == "":
			return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"roots": &sdk.ListRootsParams{}}, RequestState: "once"}, nil
		case strings.Contains(string(req.Params.Arguments), "refuse"):
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "refused after the roots"}}}, nil
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the roots were not what it wanted"}
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "sample"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"s": &sdk.CreateMessageParams{MaxTokens: 10}}}, nil, nil
	})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestInputRequiredBounds: rounds that need no person are answered at
// once; a server that keeps asking ends the call after the bound, one
// that keeps answering it needs time after three retries, and one that
// asks for what kindkit did not declare at once; a retry's JSON-RPC error
// and a retry's error result are the call's. Each is a tool error the
// model reads, and the turn goes on.
func TestInputRequiredBounds(t *testing.T) {
	var roots atomic.Int32
	url := pester(t, &roots)
	for _, tc := range []struct{ tool, args, want string }{
		{"roots", `{}`, "asked for input 11 times in one call; kindkit answers at most 10 rounds"},
		{"busy", `{}`, "answered 4 times in a row that it needs more time"},
		{"fails", `{}`, "tool pester__fails failed: calling \"tools/call\": sending \"tools/call\": the roots were not what it wanted"},
		{"fails", `{"refuse":true}`, "refused after the roots"},
		{"sample", `{}`, "asked for *mcp.CreateMessageWithToolsParams, which kindkit did not declare"},
	} {
		t.Run(tc.tool+tc.args, func(t *testing.T) {
			k := startOn(t, "pester", url, tc.tool, nil, nil,
				agent.ScriptEntry{Kind: "toolCall", Name: mcp.ToolName("pester", tc.tool), Arguments: tc.args, ID: "call-1"}, agent.ScriptEntry{Kind: "text", Text: "done"})
			c := wstest.Dial(t, k.WS())
			c.Send(`{"action":"create_conversation_session","requestId":"c","agentId":"a","supports":["mcp_elicitation"]}`)
			sid := wstest.Path(c.Expect("immediate_response")[0], "data", "sessionId").(string)
			c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"go"}`)
			if r, isErr := toolError(t, c); !isErr || !strings.Contains(r, tc.want) {
				t.Errorf("tool result %q, want %q in it", r, tc.want)
			}
		})
	}
	if roots.Load() != 10 {
		t.Errorf("the roots tool got %d retries with no roots, want 10", roots.Load())
	}
}

// toolError reads the turn to its end and returns the MCP tool call's
// result and whether it is an error.
func toolError(t *testing.T, c *wstest.Client) (result string, isError bool) {
	t.Helper()
	for {
		ev := c.Next()
		switch ev["type"] {
		case "stream_chunk":
			if r, ok := wstest.Path(ev, "data", "state", "rawResponse", "toolResult", "result").(string); ok {
				result = r
				isError, _ = wstest.Path(ev, "data", "state", "rawResponse", "toolResult", "isError").(bool)
			}
		case "stream_token", "immediate_response":
		case "eventual_response":
			return result, isError
		default:
			t.Fatalf("got %v while the turn finished", ev)
		}
	}
}
