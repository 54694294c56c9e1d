package web_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/kinds"
)

// writeScreenshots makes TestAccessibility write docs/chat-page.md's screenshots
// into docs/screenshots; a plain test run writes nothing in the tree.
var writeScreenshots = flag.Bool("screenshots", false, "write docs/chat-page.md's screenshots to docs/screenshots")

// axeSource is axe-core's script: $KINDKIT_TEST_AXE (scripts/axe.sh
// installs it). Without it the test skips, except in CI, where it fails.
func axeSource(t *testing.T) string {
	t.Helper()
	p := os.Getenv("KINDKIT_TEST_AXE")
	if p == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("KINDKIT_TEST_AXE is not set in CI: install axe-core with scripts/axe.sh")
		}
		t.Skip("KINDKIT_TEST_AXE is not set: run scripts/axe.sh")
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("read axe-core: %v", err)
	}
	return string(b)
}

// violation is one axe finding.
type violation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target         []any  `json:"target"`
		FailureSummary string `json:"failureSummary"`
	} `json:"nodes"`
}

// axe runs axe-core on the page as it is, with every rule on (the
// experimental and AAA ones too), and fails the test for every finding but
// AAA contrast (aaaContrast), which is logged.
// aaaContrast is axe's rule for WCAG AAA contrast (7:1), kept as a log:
// the page meets AA (4.5:1), which color-contrast checks.
const aaaContrast = "color-contrast-enhanced"

func (p *page) axe(src, when string) {
	p.t.Helper()
	if !eval[bool](p, `!!window.axe`) {
		p.do("load axe-core", chromedp.Evaluate[chromedp.Void](src))
	}
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`axe.run(document, {rules: Object.fromEntries(axe.getRules().map(r => [r.ruleId, {enabled: true}]))}).then(r => JSON.stringify({violations: r.violations, passes: r.passes.length, dark: matchMedia("(prefers-color-scheme: dark)").matches}))`, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("%s: run axe: %v", when, err)
	}
	var res struct {
		Violations []violation `json:"violations"`
		Passes     int         `json:"passes"`
		Dark       bool        `json:"dark"`
	}
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		p.t.Fatalf("%s: axe's result: %v", when, err)
	}
	if res.Passes == 0 {
		p.t.Fatalf("%s: axe checked nothing", when)
	}
	p.t.Logf("%s: axe passed %d rules, %d found something (dark scheme: %v)", when, res.Passes, len(res.Violations), res.Dark)
	for _, v := range res.Violations {
		if v.ID == aaaContrast {
			p.t.Logf("%s: axe %s (%s): %s", when, v.ID, v.Impact, v.Help)
			continue
		}
		var where []string
		for _, n := range v.Nodes {
			where = append(where, fmt.Sprintf("%v: %s", n.Target, strings.ReplaceAll(n.FailureSummary, "\n", " ")))
		}
		p.t.Errorf("%s: axe %s (%s): %s\n  %s", when, v.ID, v.Impact, v.Help, strings.Join(where, "\n  "))
	}
}

// setLook sets the viewport and the colour scheme (reduced motion stays
// on, as newPage asks).
func (p *page) setLook(width, height int64, mobile bool, scheme string) {
	p.t.Helper()
	opts := []chromedp.EmulateViewportOption{}
	if mobile {
		opts = append(opts, chromedp.EmulateMobile)
	}
	p.do(fmt.Sprintf("%d×%d, %s", width, height, scheme), chromedp.EmulateViewport(width, height, opts...),
		chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
			_, err := cdp.Call(ctx, tgt, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{
				{Name: "prefers-reduced-motion", Value: "reduce"}, {Name: "prefers-color-scheme", Value: scheme}}})
			return err
		}))
}

// TestAccessibility: axe-core finds nothing serious or critical on the page
// with ended cards (answered, declined), a Markdown reply and a card
// waiting with its errors shown, at 1280×800 and 390×844, light and dark, and again after a
// reload, when the ended cards come from the history. With -screenshots it
// writes docs/chat-page.md's screenshots.
func TestAccessibility(t *testing.T) {
	chromium(t)
	src := axeSource(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	browser := startBrowser(t)
	p := newPage(t, browser)
	p.setLook(1280, 800, false, "light")
	p.open(startServer(t, catalog, []agent.ScriptEntry{
		{Kind: "toolCall", Name: "request_choices", Arguments: `{"questions":[{"question":"Which plan fits your team?","header":"Plan","options":[{"label":"Starter","description":"Up to 5 people"},{"label":"Team","description":"Up to 50 people"}]},{"question":"What should the quote cover?","header":"Topics","options":["Pricing","Security","SSO"],"multiSelect":true}],"reason":"to prepare your quote"}`},
		{Kind: "text", Text: "**Team** it is. The quote covers:\n\n- pricing for 50 seats\n- SSO setup\n\nSee [our pricing](https://example.com/pricing)."},
		{Kind: "toolCall", Name: "request_rating", Arguments: `{"question":"How clear was that?","scale":{"min":1,"max":5,"minLabel":"Not at all","maxLabel":"Very"}}`},
		{Kind: "text", Text: "No worries."},
		{Kind: "toolCall", Name: "request_identity_intake", Arguments: `{"fields":["name","email",{"key":"phone","required":false}],"reason":"to send you the quote"}`},
	}))
	reply := func(text string) {
		t.Helper()
		p.waitFor("the reply", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes(`+"`"+text+"`"+`))`)
		p.do("the turn's end", chromedp.WaitEnabled(chromedp.CSS("#send")))
	}
	p.say("I'd like a quote", true)
	card := `.card[data-kind="choices"]`
	p.do("answer the choices", chromedp.WaitVisible(chromedp.CSS(card+` .chip[data-label="Team"]`)),
		chromedp.Click(chromedp.CSS(card+` .chip[data-label="Team"]`)),
		chromedp.Click(chromedp.CSS(card+` .chip[data-label="Pricing"]`)),
		chromedp.Click(chromedp.CSS(card+` .chip[data-label="SSO"]`)),
		chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	reply("The quote covers")
	p.say("thanks", true)
	card = `.card[data-kind="rating"]`
	p.do("decline the rating", chromedp.WaitVisible(chromedp.CSS(card+` .chip`)),
		chromedp.Click(chromedp.CSS(card+` .card-actions button.quiet`)))
	reply("No worries.")
	p.say("send it to me", true)
	card = `.card[data-kind="identity_intake"]`
	p.do("the identity card", chromedp.WaitVisible(chromedp.CSS(card+` input[name="email"]`)))

	looks := []struct {
		name          string
		width, height int64
		mobile        bool
	}{{"desktop", 1280, 800, false}, {"phone", 390, 844, true}}
	if *writeScreenshots {
		for _, look := range looks {
			for _, scheme := range []string{"light", "dark"} {
				p.setLook(look.width, look.height, look.mobile, scheme)
				p.screenshotToDocs(look.name+"-"+scheme+".png", look.width, look.mobile, scheme)
			}
		}
	}

	p.do("the identity card, sent with errors",
		chromedp.SendKeys(chromedp.CSS(card+` input[name="email"]`), "not an address"),
		chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(card+` [data-field="email"] .field-error`)))

	for _, reload := range []bool{false, true} {
		if reload {
			p.do("reload", chromedp.Reload())
			p.waitFor("the session", `document.querySelector("#status").dataset.state === "online"`)
			p.waitFor("the history", `document.querySelectorAll('.history .card').length === 2`)
			p.do("the identity card again", chromedp.WaitVisible(chromedp.CSS(`.card[data-kind="identity_intake"] input[name="email"]`)))
		}
		for _, look := range looks {
			for _, scheme := range []string{"light", "dark"} {
				p.setLook(look.width, look.height, look.mobile, scheme)
				when := fmt.Sprintf("%s, %s, reload=%v", look.name, scheme, reload)
				p.axe(src, when)
			}
		}
	}
}

// screenshotToDocs writes the whole conversation to docs/screenshots/name:
// the viewport is made as tall as the conversation for the shot.
func (p *page) screenshotToDocs(name string, width int64, mobile bool, scheme string) {
	p.t.Helper()
	extra := eval[int64](p, `(() => { const log = document.querySelector("#log"); return log.scrollHeight - log.clientHeight })()`)
	height := eval[int64](p, `innerHeight`) + extra
	p.setLook(width, height, mobile, scheme)
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := filepath.Join("..", "docs", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.t.Logf("wrote %s", filepath.Join(dir, name))
}
