package web_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/gen/choicesgen"
	"github.com/kindkit/kindkit/gen/ratinggen"
	"github.com/kindkit/kindkit/inbox"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/server"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/web"
)

var inboxSecret = []byte("inbox-page-test-auth-secret-0123456789")

// inboxFor says whom the ask of a conversation of each owner is addressed
// to: bob, or a group of his; fay's ask is hers (unaddressed). gus's ask
// is a rating, every other a choice of plan.
var inboxFor = map[string]string{"cy": "bob", "dee": "group:ops", "eve": "bob", "gus": "bob"}

// inboxServer serves the chat page, the inbox page and the inbox's calls,
// auth on, over an engine whose every turn asks which plan, addressed by
// its conversation's owner (inboxFor).
func inboxServer(t *testing.T) *servertest.Server {
	t.Helper()
	tool, err := agent.NewTool("pick_plan", "Ask which plan.", func(ctx context.Context, _ struct{}) (any, error) {
		call, _ := agent.CallFrom(ctx)
		to := kindkit.AddressedTo(inboxFor[call.Principal])
		if call.Principal == "gus" {
			v, err := ratinggen.Ask(ctx, &ratinggen.Spec{Question: "How did we do?", Scale: ratinggen.Scale{Min: 1, Max: 5}}, "to ask gus", to)
			if err != nil {
				return nil, err
			}
			return fmt.Sprintf("rated %d", v.Score), nil
		}
		q := &choicesgen.Spec{Questions: []choicesgen.Question{{Question: "Which plan?", Header: "Plan",
			Options: []choicesgen.Option{{Label: "Basic"}, {Label: "Pro"}}}}}
		v, err := choicesgen.Ask(ctx, q, "to quote "+call.Principal, to)
		if err != nil {
			return nil, err
		}
		return "chose " + v.Answers[0].Options[0], nil
	})
	if err != nil {
		t.Fatal(err)
	}
	model, err := agent.NewScripted([]agent.ScriptEntry{{Kind: "toolCall", Name: "pick_plan", Arguments: `{}`}, {Kind: "text", Text: "Pro it is."}})
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	mux := http.NewServeMux()
	srv := servertest.Start(t, servertest.Config{Catalog: catalog, Model: model, Tools: []agent.HostTool{tool}, AuthSecret: inboxSecret,
		ParkTimeout: time.Hour, Logger: quiet}, mux)
	h := inbox.NewHandler(srv.Engine, inbox.Options{AuthSecret: inboxSecret, Logger: quiet})
	mux.Handle("/inbox/asks", h)
	mux.Handle("/inbox/submit", h)
	mux.Handle("/", web.Handler(catalog))
	return srv
}

// parkFor starts a conversation of owner on the engine, whose turn parks
// on its ask; it returns the conversation's id.
func parkFor(t *testing.T, eng *agent.Engine, owner string) string {
	t.Helper()
	ctx := agent.WithPrincipal(context.Background(), owner)
	conv, sess, err := eng.NewConversation(ctx, owner, []string{"choice_chips", "rating_scale"}, agent.Opening{})
	if err != nil {
		t.Fatal(err)
	}
	prompted := make(chan struct{}, 1)
	stop := eng.Subscribe(ctx, conv.ID, agent.Position{}, func(ev agent.Event) {
		if ev.Kind == agent.EventPrompt {
			prompted <- struct{}{}
		}
	})
	defer stop()
	if err := eng.Send(ctx, sess, agent.Message{RequestID: "r1", Text: "quote"}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-prompted:
	case <-time.After(stepTimeout):
		t.Fatalf("%s's turn never parked", owner)
	}
	return conv.ID
}

func bearerOf(sub string, groups ...string) string {
	return server.SignToken(inboxSecret, server.Principal{Sub: sub, Groups: groups}, time.Now().Add(time.Hour))
}

// TestInboxInBrowser: cy's turn waits on a card addressed to bob, shown
// read-only in cy's own tab; dee's waits on one for bob's group, eve's on
// one for bob, fay's on her own. Bob's inbox page lists the three that
// are his, with their kind, deadline and conversation, and not fay's. He
// answers cy's in place: cy's tab sees the turn resume live, the record
// says bob answered from the inbox, and the other two stay listed, open.
func TestInboxInBrowser(t *testing.T) {
	chromium(t)
	srv := inboxServer(t)
	browser := startBrowser(t)
	cyTab := newPage(t, browser)
	cyTab.open(srv.URL + "/?token=" + bearerOf("cy"))
	cyTab.say("quote", true)
	card := `.card[data-kind="choices"]`
	cyTab.waitFor("cy's card, waiting for bob", `document.querySelector('`+card+`')?.dataset.state === "waiting"`)
	ctx := context.Background()
	cys, err := srv.Engine.Store().ListConversations(ctx, store.ConversationFilter{Owner: "cy"}, 10)
	if err != nil || len(cys) != 1 {
		t.Fatalf("cy's conversations: %v, %v", cys, err)
	}
	cyConv := cys[0].ID
	deeConv, eveConv := parkFor(t, srv.Engine, "dee"), parkFor(t, srv.Engine, "eve")
	parkFor(t, srv.Engine, "fay")

	bobTab := newPage(t, browser)
	bobTab.do("open bob's inbox", chromedp.Navigate(srv.URL+"/inbox?token="+bearerOf("bob", "ops")))
	open := `#asks > li ` + card + `[data-state="open"]`
	bobTab.waitFor("three asks", `document.querySelectorAll('`+open+`').length === 3`)
	convs := eval[[]string](bobTab, `[...document.querySelectorAll("#asks > li")].map(li => li.dataset.conversationId)`)
	if want := []string{cyConv, deeConv, eveConv}; !slices.Equal(convs, want) {
		t.Errorf("bob's inbox lists the asks of %q, want %q (by deadline)", convs, want)
	}
	cyItem := `#asks > li[data-conversation-id="` + cyConv + `"]`
	if got := bobTab.text(cyItem + " .inbox-meta"); !strings.Contains(got, "choices") || !strings.Contains(got, "due") || !strings.Contains(got, cyConv) {
		t.Errorf("cy's ask's line: %q, want its kind, deadline and conversation", got)
	}
	if got := bobTab.text(cyItem + " .card"); !strings.Contains(got, "Which plan?") || !strings.Contains(got, "quote cy") {
		t.Errorf("cy's ask's card: %q, want its question and reason", got)
	}
	if got := bobTab.text("#status"); got != "3 questions wait for you" {
		t.Errorf("status %q", got)
	}

	bobTab.do("answer cy's ask in place", chromedp.Click(chromedp.CSS(cyItem+` .chip[data-label="Pro"]`)),
		chromedp.Click(chromedp.CSS(cyItem+` button[type="submit"]`)))
	bobTab.waitFor("cy's ask answered", `document.querySelector('`+cyItem+` .card').dataset.state === "answered"`)
	cyTab.waitFor("cy's turn resumed live", `[...document.querySelectorAll(".msg.assistant")].some(m => m.innerText.includes("Pro it is."))`)
	cyTab.waitFor("cy's card closed, answered", `document.querySelector('`+card+`').dataset.state === "answered"`)
	if n := eval[int](bobTab, `document.querySelectorAll('`+open+`').length`); n != 2 {
		t.Errorf("%d asks still open in bob's inbox, want 2", n)
	}
	for _, conv := range []string{deeConv, eveConv} {
		if eval[int](bobTab, `document.querySelectorAll('#asks > li[data-conversation-id="`+conv+`"] `+card+`[data-state="open"]').length`) != 1 {
			t.Errorf("the ask of %s is not listed open any more", conv)
		}
	}
	srv.Engine.Wait()
	recs, err := srv.Engine.Records(ctx, cyConv, time.Time{}, "", 10)
	if err != nil || len(recs) != 1 || recs[0].Record == nil || recs[0].Record.By != "bob" || recs[0].Record.Via != agent.ViaInbox {
		t.Errorf("cy's records: %+v, %v; want answered by bob from the inbox", recs, err)
	}
	bobTab.do("reload bob's inbox", chromedp.Reload())
	bobTab.waitFor("two asks", `document.querySelectorAll('`+open+`').length === 2 && document.querySelectorAll("#asks > li").length === 2`)
}

// TestInboxFilters: bob's inbox holds dee's choice and gus's rating. The
// kind filter lists one of them, and puts itself in the page's address,
// from which a reload reads it back; a deadline filter before both
// deadlines lists neither and says so; clearing the filters lists both.
func TestInboxFilters(t *testing.T) {
	chromium(t)
	srv := inboxServer(t)
	dee, gus := parkFor(t, srv.Engine, "dee"), parkFor(t, srv.Engine, "gus")
	pg := newPage(t, startBrowser(t))
	pg.do("open bob's inbox", chromedp.Navigate(srv.URL+"/inbox?token="+bearerOf("bob", "ops")))
	listed := func(what string, want ...string) {
		t.Helper()
		js := `[...document.querySelectorAll("#asks > li")].map(li => li.dataset.conversationId).join(",") === ` + strconv.Quote(strings.Join(want, ","))
		pg.waitFor(what, js)
	}
	listed("both asks", dee, gus)
	// set gives field sel the value of JS expression value, as a person
	// would: its change event fires.
	set := func(sel, value string) {
		t.Helper()
		eval[bool](pg, `(() => { const el = document.querySelector(`+strconv.Quote(sel)+`); el.value = `+value+
			`; return el.dispatchEvent(new Event("change", { bubbles: true })); })()`)
	}
	set("#kind", `"rating"`)
	listed("gus's rating alone", gus)
	if got := pg.text("#asks .inbox-kind"); got != "rating" {
		t.Errorf("the listed ask's kind is %q, want rating", got)
	}
	if url := eval[string](pg, `location.search`); !strings.Contains(url, "kind=rating") || !strings.Contains(url, "token=") {
		t.Errorf("the page's address %q, want its token and kind=rating", url)
	}
	pg.do("reload", chromedp.Reload())
	listed("gus's rating alone, after a reload", gus)
	if got := eval[string](pg, `document.querySelector("#kind").value`); got != "rating" {
		t.Errorf("after a reload the kind filter is %q, want rating", got)
	}
	set("#kind", `""`)
	listed("both asks again", dee, gus)
	// Both deadlines are an hour away (ParkTimeout): due before half an
	// hour from now lists none, before two hours both.
	local := `(m => { const d = new Date(Date.now() + m * 60000); const p = n => String(n).padStart(2, "0");
		return d.getFullYear() + "-" + p(d.getMonth() + 1) + "-" + p(d.getDate()) + "T" + p(d.getHours()) + ":" + p(d.getMinutes()); })`
	set("#before", local+"(30)")
	listed("no asks")
	pg.waitFor("the status says none match", `document.querySelector("#status").textContent === "No questions match the filters"`)
	set("#before", local+"(120)")
	listed("both asks within two hours", dee, gus)
	srv.Engine.Wait()
}

// TestInboxPageAccessible runs axe-core on the inbox page: its cards open,
// then one answered, then as a page without a token sees it.
func TestInboxPageAccessible(t *testing.T) {
	src := axeSource(t)
	chromium(t)
	srv := inboxServer(t)
	cy := parkFor(t, srv.Engine, "cy")
	parkFor(t, srv.Engine, "dee")
	pg := newPage(t, startBrowser(t))
	pg.do("open bob's inbox", chromedp.Navigate(srv.URL+"/inbox?token="+bearerOf("bob", "ops")))
	card := `#asks > li .card[data-kind="choices"]`
	pg.waitFor("two asks", `document.querySelectorAll('`+card+`[data-state="open"]').length === 2`)
	pg.axe(src, "the inbox, its cards open")
	item := `#asks > li[data-conversation-id="` + cy + `"] .card`
	pg.do("answer", chromedp.Click(chromedp.CSS(item+` .chip[data-label="Pro"]`)), chromedp.Click(chromedp.CSS(item+` button[type="submit"]`)))
	pg.waitFor("answered", `document.querySelector('`+item+`').dataset.state === "answered"`)
	pg.axe(src, "the inbox, one ask answered")
	pg.do("open it without a token", chromedp.Navigate(srv.URL+"/inbox"))
	pg.waitFor("the refusal", `document.querySelector("#problem") !== null`)
	pg.axe(src, "the inbox without a token")
	srv.Engine.Wait()
}
