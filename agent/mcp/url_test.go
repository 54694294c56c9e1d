package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/wstest"
)

const bankLink = "https://bank.example/connect?session=E1"

// bank is a go-sdk MCP server (before 2026-07-28: it asks during the call)
// whose connect tool asks the person, in URL mode, to open bankLink, and
// says how that ended: the action, and whether any content came back (a
// URL-mode answer must carry none). notice says when the server sends its
// completion notice for the question: "" never, "before" just before it
// asks (a notice kindkit gets ahead of the question), "after" when the
// test closes shown (the card is shown). link replaces bankLink when set.
func bank(t *testing.T, notice, link string, shown <-chan struct{}) *httptest.Server {
	t.Helper()
	if link == "" {
		link = bankLink
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "bank", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "connect", Description: "Connects the person's bank account."}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		ctx, cancel := context.WithTimeout(ctx, wstest.Timeout)
		defer cancel()
		done := &sdk.ElicitationCompleteParams{ElicitationID: "E1"}
		switch notice {
		case "before":
			if err := req.Session.NotifyElicitationComplete(ctx, done); err != nil {
				return nil, nil, err
			}
		case "after":
			go func() {
				// Once the question is a card: the person finished the
				// bank's flow in their browser.
				select {
				case <-shown:
					req.Session.NotifyElicitationComplete(ctx, done)
				case <-ctx.Done():
				}
			}()
		}
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Mode: "url", Message: "Connect your bank account to continue.", URL: link, ElicitationID: "E1"})
		if err != nil {
			return nil, nil, err
		}
		content := "none"
		if res.Content != nil {
			content = fmt.Sprint(res.Content)
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Action + ", content " + content}}}, nil, nil
	})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs
}

// connecting opens a session that can show cards, asks for the bank
// connection and returns the card's data.
func connecting(t *testing.T, k *kindkit) (c *wstest.Client, sid string, card map[string]any) {
	t.Helper()
	c = wstest.Dial(t, k.WS())
	c.Send(`{"action":"create_conversation_session","requestId":"c","agentId":"a","supports":["mcp_elicitation"]}`)
	sid = wstest.Path(c.Expect("immediate_response")[0], "data", "sessionId").(string)
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"connect my bank"}`)
	c.Expect("immediate_response")
	return c, sid, nextCard(t, c)
}

// TestURLElicitation: a server's URL-mode elicitation/create is a card of
// the elicitation kind that carries the link and the server's id of the
// question, never a form. The person's done goes back as accept without
// content, a decline as decline; the server's completion notice answers
// the card as done without the person, whether it comes while the card
// waits or before kindkit has even seen the question. A link that is not
// http(s) is refused by the kind's rules, and the server is told why.
func TestURLElicitation(t *testing.T) {
	for _, c := range []struct {
		name, notice, link, answer, result string
	}{
		{"done", "", "", `"values":{}`, "accept, content none"},
		{"declined", "", "", `"declined":true`, "decline, content none"},
		{"notice", "after", "", "", "accept, content none"},
		{"notice first", "before", "", "", "accept, content none"},
	} {
		t.Run(c.name, func(t *testing.T) {
			shown := make(chan struct{})
			k := startOn(t, "bank", bank(t, c.notice, c.link, shown).URL, "connect", nil, nil)
			ws, sid, card := connecting(t, k)
			close(shown)
			if card["kind"] != "elicitation" || wstest.Path(card, "spec", "mode") != "url" || wstest.Path(card, "spec", "url") != bankLink ||
				wstest.Path(card, "spec", "elicitationId") != "E1" || wstest.Path(card, "spec", "server") != "bank" ||
				wstest.Path(card, "spec", "requestedSchema") != nil {
				t.Fatalf("card %v, want the bank's link", card)
			}
			if c.answer != "" {
				submit(ws, sid, card["interactionId"].(string), c.answer)
			}
			if r := toolResult(t, ws); r != c.result {
				t.Errorf("tool result %q, want %q", r, c.result)
			}
		})
	}
	t.Run("not a web link", func(t *testing.T) {
		k := startOn(t, "bank", bank(t, "", "javascript:alert(1)", nil).URL, "connect", nil, nil)
		ws := wstest.Dial(t, k.WS())
		ws.Send(`{"action":"create_conversation_session","requestId":"c","agentId":"a","supports":["mcp_elicitation"]}`)
		sid := wstest.Path(ws.Expect("immediate_response")[0], "data", "sessionId").(string)
		ws.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"connect my bank"}`)
		ws.Expect("immediate_response")
		if r := toolResult(t, ws); !strings.Contains(r, "must be an http or https link") {
			t.Errorf("tool result %q, want the kind's refusal of the link", r)
		}
	})
}

// bankByResult is a go-sdk MCP server that speaks MCP 2026-07-28 and asks
// through its result: its connect tool's input request is a URL-mode
// elicitation (with no elicitationId, which 2026-07-28 has not), and the
// retry says how it ended.
func bankByResult(t *testing.T) *httptest.Server {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "bank", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "connect", Description: "Connects the person's bank account."}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		if req.Params.RequestState == "" {
			return &sdk.CallToolResult{RequestState: "asked", InputRequests: sdk.InputRequestMap{
				"bank": &sdk.ElicitParams{Mode: "url", Message: "Connect your bank account to continue.", URL: bankLink}}}, nil, nil
		}
		r, ok := req.Params.InputResponses["bank"].(*sdk.ElicitResult)
		if !ok || req.Params.RequestState != "asked" {
			return nil, nil, fmt.Errorf("no answer to the bank request")
		}
		content := "none"
		if r.Content != nil {
			content = fmt.Sprint(r.Content)
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: r.Action + ", content " + content}}}, nil, nil
	})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(hs.Close)
	return hs
}

// TestInputRequiredURL: a 2026-07-28 server's URL-mode input request parks
// as a link card like any other question; done is retried as accept
// without content, a decline as decline.
func TestInputRequiredURL(t *testing.T) {
	url := bankByResult(t).URL
	for _, c := range []struct{ name, answer, result string }{
		{"done", `"values":{}`, "accept, content none"},
		{"declined", `"declined":true`, "decline, content none"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws, sid, card := connecting(t, startOn(t, "bank", url, "connect", nil, nil))
			if wstest.Path(card, "spec", "mode") != "url" || wstest.Path(card, "spec", "url") != bankLink || wstest.Path(card, "spec", "elicitationId") != nil {
				t.Fatalf("card %v, want the bank's link, without an id", card)
			}
			submit(ws, sid, card["interactionId"].(string), c.answer)
			if r := toolResult(t, ws); r != c.result {
				t.Errorf("tool result %q, want %q", r, c.result)
			}
		})
	}
}

// TestURLElicitationInWords: a channel that cannot show the card gets the
// link in the kind's directive; the model's submit_interaction with empty
// values (the person said done) goes to the waiting server as accept.
func TestURLElicitationInWords(t *testing.T) {
	k := startOn(t, "bank", bank(t, "", "", nil).URL, "connect", nil, nil,
		agent.ScriptEntry{Kind: "toolCall", Name: "bank__connect", Arguments: `{}`, ID: "call-1"},
		agent.ScriptEntry{Kind: "toolCall", Name: "submit_interaction", ID: "call-2", Arguments: `{"kind":"elicitation","values":{}}`},
		agent.ScriptEntry{Kind: "text", Text: "done"})
	results := inWords(t, k.WS(), "connect my bank")
	var directive struct{ Instructions string }
	if len(results) != 2 || json.Unmarshal([]byte(results[0]), &directive) != nil ||
		!strings.Contains(directive.Instructions, bankLink) || !strings.Contains(directive.Instructions, "leads to bank.example") || results[1] != "accept, content none" {
		t.Errorf("tool results %q, want the directive with the link, then accept", results)
	}
}
