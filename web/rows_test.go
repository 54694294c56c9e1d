package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/kinds"
)

// teamValues is a list of rows, each an object with a required name, an
// email and a phone: the page checks every row's fields before it sends.
const teamValues = `{"type":"object","required":["members"],"additionalProperties":false,"properties":{
	"members":{"type":"array","minItems":1,"x-ui":{"label":"Team members"},"items":{"type":"object","required":["name"],"additionalProperties":false,"properties":{
		"name":{"type":"string","minLength":2,"pattern":"^[A-Z]","x-ui":{"label":"Name"}},
		"email":{"type":"string","format":"email","x-ui":{"label":"Email"}},
		"phone":{"type":"string","format":"phone","x-ui":{"label":"Phone"}}}}}}}`

func teamKind(t *testing.T) kindkit.Kind {
	t.Helper()
	k, err := kindkit.NewKind[map[string]any, map[string]any](kindkit.Descriptor{
		Name: "team", Capability: "team_form", ToolName: "request_team", Source: "test/team.schema.json",
		ToolSchema: `{"type":"object","properties":{"prompt":{"type":"string"},"reason":{"type":"string"}},"required":["prompt","reason"]}`,
		Schema: `{"$defs":{"Spec":{"type":"object","required":["prompt"],"properties":{"prompt":{"type":"string"}}},
			"Values":` + teamValues + `}}`,
		ValuesSchema: teamValues,
	}, surveyRules{})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestCardRows: fields inside the rows of a list are checked before the
// card is sent (a missing or short name, an email and a phone not in
// their form), each error on its own row's field and cleared as it is
// fixed; a phone field is a tel input. Nothing goes to the server until
// every row is right.
func TestCardRows(t *testing.T) {
	chromium(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	withTeam := catalogWith(t, catalog, teamKind(t))
	browser := startBrowser(t)
	p := newPage(t, browser)
	p.open(startServer(t, withTeam, []agent.ScriptEntry{
		{Kind: "toolCall", Name: "request_team", Arguments: `{"prompt":"Who is on the team?","reason":"to invite them"}`},
		{Kind: "text", Text: "Invites sent."},
	}))
	p.say("invite my team", true)
	card := `.card[data-kind="team"]`
	row := func(i, name string) string { return card + ` [data-field="members[` + i + `].` + name + `"]` }
	p.do("the team card", chromedp.WaitVisible(chromedp.CSS(row("0", "name")+` input`)))
	if got := eval[string](p, `(() => { const i = document.querySelector('`+row("0", "phone")+` input'); return i.type + "," + i.autocomplete + "," + i.inputMode })()`); got != "tel,tel,tel" {
		t.Errorf("phone input is %q, want type, autocomplete and inputmode tel", got)
	}
	p.checkLabels(card)
	p.do("a second row", chromedp.Click(chromedp.CSS(card+` .array-actions button`)))
	p.do("rows with mistakes",
		chromedp.SendKeys(chromedp.CSS(row("0", "name")+` input`), "A"),
		chromedp.SendKeys(chromedp.CSS(row("0", "phone")+` input`), "call me"),
		chromedp.SendKeys(chromedp.CSS(row("1", "email")+` input`), "bob-at-example"))
	p.do("count frames", chromedp.Evaluate[chromedp.Void](`(() => {
		const send = WebSocket.prototype.send;
		window.__submits = 0;
		WebSocket.prototype.send = function (d) { if (String(d).includes('"submit_interaction"')) window.__submits++; return send.call(this, d); };
	})()`))
	p.do("submit", chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	for sel, want := range map[string]string{
		row("0", "name"):  "Use at least 2 characters.",
		row("0", "phone"): "Enter a phone number",
		row("1", "name"):  "This is required.",
		row("1", "email"): "Enter an email address",
	} {
		p.do("the error of "+sel, chromedp.WaitVisible(chromedp.CSS(sel+` .field-error`)))
		if got := p.text(sel + ` .field-error`); !strings.Contains(got, want) {
			t.Errorf("%s: error %q, want %q", sel, got, want)
		}
		if got := eval[string](p, `document.querySelector('`+sel+` input').getAttribute("aria-invalid")`); got != "true" {
			t.Errorf("%s: aria-invalid=%q", sel, got)
		}
	}
	if got := p.text(row("0", "email") + ` .field-error`); got != "" {
		t.Errorf("an empty optional email has error %q", got)
	}
	if n := eval[int](p, `window.__submits`); n != 0 {
		t.Errorf("%d submits sent with rows still wrong", n)
	}
	p.do("fix the first name", chromedp.SendKeys(chromedp.CSS(row("0", "name")+` input`), "da"))
	if got := p.text(row("0", "name") + ` .field-error`); got != "" {
		t.Errorf("the name error %q stays as it is fixed", got)
	}
	p.do("fix the rest",
		chromedp.Evaluate[chromedp.Void](`document.querySelector('`+row("0", "phone")+` input').value = ""`),
		chromedp.SendKeys(chromedp.CSS(row("0", "phone")+` input`), "+44 20 7946 0958"),
		chromedp.SendKeys(chromedp.CSS(row("1", "name")+` input`), "Bob"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('`+row("1", "email")+` input').value = ""`),
		chromedp.SendKeys(chromedp.CSS(row("1", "email")+` input`), "bob@example.com"))

	// Rows removed and added: each error still lands on its own row.
	p.do("a third row, the first removed, a fourth",
		chromedp.Click(chromedp.CSS(card+` .array-actions button`)),
		chromedp.Click(chromedp.CSS(card+` .item:first-child > button.remove`)),
		chromedp.Click(chromedp.CSS(card+` .array-actions button`)))
	rows := eval[[]string](p, `[...document.querySelectorAll('`+card+` .item > fieldset')].map(f => f.dataset.field + "=" + (f.querySelector('input').value || "-"))`)
	if len(rows) != 3 || !strings.HasSuffix(rows[0], "=Bob") {
		t.Fatalf("rows %q, want Bob's and two empty ones", rows)
	}
	mid := card + ` .item:nth-child(2)`
	p.do("the middle row, half filled", chromedp.SendKeys(chromedp.CSS(mid+` input[type="email"]`), "x@example.com"),
		chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	p.do("the middle row's error", chromedp.WaitVisible(chromedp.CSS(mid+` .field-error`)))
	if got := p.text(mid + ` [data-field$=".name"] .field-error`); got != "This is required." {
		t.Errorf("the middle row's name error %q", got)
	}
	if n := eval[int](p, `[...document.querySelectorAll('`+card+` .item:not(:nth-child(2)) .field-error')].filter(e => !e.hidden).length`); n != 0 {
		t.Errorf("%d errors on the other rows", n)
	}
	// A pattern only the server checks: its error, for the second row
	// sent, is shown on that row, not on the row that was made second.
	p.do("a name the server refuses", chromedp.SendKeys(chromedp.CSS(mid+` input[type="text"]`), "cy"),
		chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	p.do("the server's error", chromedp.WaitVisible(chromedp.CSS(mid+` [data-field$=".name"] .field-error`)))
	if got := p.text(mid + ` [data-field$=".name"] .field-error`); !strings.Contains(got, "not in the expected form") {
		t.Errorf("the middle row's name error %q", got)
	}
	if n := eval[int](p, `[...document.querySelectorAll('`+card+` .item:not(:nth-child(2)) .field-error')].filter(e => !e.hidden).length`); n != 0 {
		t.Errorf("%d errors on the other rows", n)
	}
	p.do("fill the middle row", chromedp.Evaluate[chromedp.Void](`document.querySelector('`+mid+` input[type="text"]').value = ""`),
		chromedp.SendKeys(chromedp.CSS(mid+` input[type="text"]`), "Cy"),
		chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	checkSubmitted(t, p, "request_team", map[string]any{"members": []any{
		map[string]any{"name": "Bob", "email": "bob@example.com"},
		map[string]any{"name": "Cy", "email": "x@example.com"}}})
}
