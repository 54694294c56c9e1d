package web_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/agent/mcp"
	"github.com/kindkit/kindkit/gen/elicitationgen"
	"github.com/kindkit/kindkit/internal/mcptest"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/kinds/elicitation"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
)

// TestElicitationInPage: the reference MCP server's elicitation tool
// (@modelcontextprotocol/server-everything, from npm) parks the turn on an
// elicitation card that the page draws from the server's requested schema
// alone. A person fills it in and sends it, declines it, or lets its
// deadline pass, and the server's own words about what it got come back
// as the tool's result; the card ends as a one-line summary.
func TestElicitationInPage(t *testing.T) {
	chromium(t)
	everything := mcptest.Everything(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	browser := startBrowser(t)
	for _, c := range []struct {
		name, result, summary string
		answer                func(p *page, card string)
	}{
		{"submit", "Name: Ada Lovelace", "String: Ada Lovelace", func(p *page, card string) {
			p.do("fill in the form",
				chromedp.SendKeys(chromedp.CSS(card+` input[name="name"]`), "Ada Lovelace"),
				chromedp.SendKeys(chromedp.CSS(card+` input[name="email"]`), "ada@example.com"),
				chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
		}},
		{"decline", "User declined", "Declined", func(p *page, card string) {
			p.do("decline", chromedp.Click(chromedp.CSS(card+` .card-actions button.quiet`)))
		}},
		// The wire does not say how an Ask's card ended (its tool's result
		// is the server's words, not the payload): the page reads it from
		// the history.
		{"deadline", "User cancelled", "No answer in time.", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, model := everythingAsks(t, everything, "everything__trigger-elicitation-request", `{}`)
			st, clock := memstore.New(), clockwork.NewFakeClock()
			p := newPage(t, browser)
			p.open(startServerConfig(t, servertest.Config{Catalog: catalog, Model: model, Store: st,
				ToolSets: []agent.ToolSet{src}, Clock: clock, ParkTimeout: time.Hour}))
			p.say("ask me", true)
			card := `.card[data-kind="elicitation"]`
			p.do("the elicitation card", chromedp.WaitVisible(chromedp.CSS(card+` button[type="submit"]`)))
			text := p.text(card)
			for _, want := range []string{"Please provide inputs for the following fields:", "Your full, legal name", "String with email format"} {
				if !strings.Contains(text, want) {
					t.Errorf("the card lacks %q:\n%s", want, text)
				}
			}
			if c.answer != nil {
				c.answer(p, card)
			} else {
				clock.Advance(2 * time.Hour)
			}
			p.waitFor("the reply", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Thanks."))`)
			if r := toolResult(t, st); !strings.Contains(r, c.result) {
				t.Errorf("the tool's result %q, want %q in it", r, c.result)
			}
			p.waitFor("the card's summary", `document.querySelector('`+card+` .card-status').innerText.includes(`+strconv.Quote(c.summary)+`)`)
		})
	}
}

// TestURLElicitationInPage: the reference MCP server's URL-mode
// elicitation (trigger-url-elicitation, which it offers only to a client
// that declared URL mode) is a card that shows the site's domain and the
// whole link, opened only in a new tab that cannot reach back, and no
// form at all. Done, pressed with the keyboard, goes back as accept;
// Cancel as decline; the card ends as "Done" or "Cancelled", and so it is
// in the history after a reload. At 320 px and in the dark scheme it
// fits, and axe-core finds nothing serious.
func TestURLElicitationInPage(t *testing.T) {
	chromium(t)
	everything := mcptest.Everything(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	browser := startBrowser(t)
	const link = "https://accounts.example.com/connect?flow=42"
	for _, c := range []struct {
		name, button, result, summary string
	}{
		{"done", "button[type=submit]", "User completed the URL elicitation flow", "Done"},
		{"cancel", "button.quiet", "User declined to open the URL", "Cancelled"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, model := everythingAsks(t, everything, "everything__trigger-url-elicitation", urlArgs(link))
			st := memstore.New()
			p := newPage(t, browser)
			p.open(startServerConfig(t, servertest.Config{Catalog: catalog, Model: model, Store: st,
				ToolSets: []agent.ToolSet{src}, ParkTimeout: time.Hour}))
			p.say("connect my account", true)
			card := `.card[data-kind="elicitation"]`
			p.do("the link card", chromedp.WaitVisible(chromedp.CSS(card+` a.link-url`)))
			for what, want := range map[string]string{
				`document.querySelector('` + card + ` .card-title').innerText`:                                               "A tool asks you to open a link",
				`document.querySelector('` + card + ` .q-text').innerText`:                                                   "Connect your account to continue.",
				`document.querySelector('` + card + ` .link-domain').innerText`:                                              "accounts.example.com",
				`document.querySelector('` + card + ` a.link-url').href`:                                                     link,
				`document.querySelector('` + card + ` a.link-url').target`:                                                   "_blank",
				`document.querySelector('` + card + ` a.link-url').rel`:                                                      "noopener noreferrer",
				`document.querySelector('` + card + ` a.link-url').firstChild.textContent`:                                   link,
				`document.querySelector('` + card + ` button[type=submit]').innerText`:                                       "Done",
				`document.querySelector('` + card + ` .card-actions .quiet').innerText`:                                      "Cancel",
				`String(document.querySelectorAll('` + card + ` input, ` + card + ` select, ` + card + ` textarea').length)`: "0",
			} {
				if got := eval[string](p, what); got != want {
					t.Errorf("%s = %q, want %q", what, got, want)
				}
			}
			if name := eval[string](p, `(() => { const a = document.querySelector('`+card+` a.link-url'); return a.innerText + " " + a.querySelector(".sr-only").textContent })()`); !strings.Contains(name, "opens in a new tab") {
				t.Errorf("the link does not say it opens a new tab: %q", name)
			}
			for _, scheme := range []string{"light", "dark"} {
				p.setLook(320, 640, true, scheme)
				if w := eval[int](p, `document.documentElement.scrollWidth`); w > 320 {
					t.Errorf("%s: the page is %d px wide at 320 px", scheme, w)
				}
				if os.Getenv("KINDKIT_TEST_AXE") != "" {
					p.axe(axeSource(t), "the link card at 320 px, "+scheme)
				}
			}
			p.do(c.name+", with the keyboard", chromedp.Focus(chromedp.CSS(card+` .card-actions `+c.button)), chromedp.KeyEvent("\r"))
			p.waitFor("the reply", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Thanks."))`)
			if r := toolResult(t, st); !strings.Contains(r, c.result) || strings.Contains(r, `"content"`) {
				t.Errorf("the tool's result %q, want %q in it and no content", r, c.result)
			}
			p.waitFor("the card's summary", `document.querySelector('`+card+` .card-status').innerText === `+strconv.Quote(c.summary))
			p.do("reload", chromedp.Reload())
			p.waitFor("the card in the history", `[...document.querySelectorAll('.history .card[data-kind="elicitation"]')].some(c => c.innerText.includes("A tool asks you to open a link") && c.innerText.includes(`+strconv.Quote(c.summary)+`))`)
		})
	}
}

// toolResult is the text of the first tool result stored in st's one
// conversation.
func toolResult(t *testing.T, st store.Store) string {
	t.Helper()
	ctx := context.Background()
	convs, err := st.ListConversations(ctx, store.ConversationFilter{}, 10)
	if err != nil || len(convs) != 1 {
		t.Fatalf("conversations %v, %v; want one", convs, err)
	}
	msgs, _, err := st.Messages(ctx, convs[0].ID, []store.Role{store.RoleTool}, "", 10)
	if err != nil || len(msgs) == 0 {
		t.Fatalf("tool messages %v, %v", msgs, err)
	}
	return msgs[len(msgs)-1].Text // newest first: the last is the first result
}

// everythingAsks is the reference MCP server (everything, its path) as a
// tool set whose elicitations show cards, and a model that calls tool
// with args, then thanks.
func everythingAsks(t *testing.T, everything, tool, args string) (agent.ToolSet, agent.Model) {
	t.Helper()
	src, err := mcp.Start(context.Background(), mcp.Source{Name: "everything", Command: []string{"node", everything, "stdio"},
		Ask: &mcp.CardKind{Name: elicitationgen.Name, Spec: elicitation.MCPSpec, URLSpec: elicitation.MCPURLSpec}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	model, err := agent.NewScripted([]agent.ScriptEntry{
		{Kind: "toolCall", Name: tool, Arguments: args},
		{Kind: "text", Text: "Thanks."}})
	if err != nil {
		t.Fatal(err)
	}
	return src, model
}

// urlArgs are the arguments of everything's URL-mode elicitation for link.
func urlArgs(link string) string {
	return `{"url":"` + link + `","message":"Connect your account to continue."}`
}
