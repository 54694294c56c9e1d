package web_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/kinds"
)

// TestCards: a kind without a card of its own is drawn from its Values
// schema and its spec as a person expects. The rating kind (no rating
// JavaScript) gets its scale as buttons with words for the ends, its
// question as text and a comment box only when the spec allows one; a
// kind with an enum, a boolean and formats gets chips, a switch and the
// right inputs, help only where written for people, and errors as
// sentences.
func TestCards(t *testing.T) {
	chromium(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	browser := startBrowser(t)
	const rating = `.card[data-kind="rating"]`

	t.Run("RatingWithComment", func(t *testing.T) {
		p := newPage(t, browser)
		p.open(startServer(t, catalog, []agent.ScriptEntry{
			{Kind: "toolCall", Name: "request_rating", Arguments: `{"question":"How did we do?","scale":{"min":1,"max":5,"minLabel":"Not at all","maxLabel":"Very"},"allowComment":true,"reason":"to improve"}`},
			{Kind: "text", Text: "Thanks for rating!"},
		}))
		p.say("rate me", true)
		p.do("the rating card", chromedp.WaitVisible(chromedp.CSS(rating+` .chips.scale .chip`)))
		text := p.text(rating)
		if !strings.Contains(text, "How did we do?") {
			t.Errorf("the card does not ask its question:\n%s", text)
		}
		for _, dump := range []string{"Allow comment", "Scale", "Max label", "blank counts as absent", "whole number on the scale", "yes"} {
			if strings.Contains(text, dump) {
				t.Errorf("the card shows %q, meant for the model or a developer:\n%s", dump, text)
			}
		}
		if got := p.text(rating + ` .card-title`); got != "A quick rating" {
			t.Errorf("heading %q", got)
		}
		values := eval[[]string](p, `[...document.querySelectorAll('`+rating+` .chips.scale .chip')].map(c => c.dataset.value + "=" + c.getAttribute("aria-pressed"))`)
		if strings.Join(values, ",") != "1=false,2=false,3=false,4=false,5=false" {
			t.Errorf("scale buttons %q, want 1 to 5, none pressed", values)
		}
		if n := eval[int](p, `document.querySelectorAll('`+rating+` input[type="number"]').length`); n != 0 {
			t.Errorf("%d number boxes: the scale is buttons", n)
		}
		if got := p.text(rating + ` .scale-ends`); !strings.Contains(got, "Not at all") || !strings.Contains(got, "Very") {
			t.Errorf("scale ends %q", got)
		}
		if got := eval[string](p, `document.querySelector('`+rating+` .chip[data-value="1"]').getAttribute("aria-label")`); got != "1, Not at all" {
			t.Errorf("the lowest button is named %q", got)
		}
		if got := eval[string](p, `(document.querySelector('`+rating+` textarea[name="comment"]') || {labels: [{innerText: ""}]}).labels[0].innerText`); !strings.Contains(got, "Anything to add?") {
			t.Errorf("comment box label %q, want a comment box when the spec allows one", got)
		}
		if bad := eval[[]string](p, `['.q-text', '.chip', 'textarea[name="comment"]'].filter(s => document.querySelector('`+rating+` ' + s).dir !== "auto")`); len(bad) > 0 {
			t.Errorf("no dir=auto on %q: text from outside is Hebrew or Arabic too", bad)
		}
		p.checkLabels(rating)
		if png, err := chromedp.Run(p.ctx, chromedp.ScreenshotScale(chromedp.CSS(rating), 2)); err == nil {
			saveScreenshot(t, "rating-card.png", png)
		}

		// Nothing picked: the page says so before asking the server.
		p.do("submit nothing", chromedp.Click(chromedp.CSS(rating+` button[type="submit"]`)))
		scoreErr := rating + ` [data-field="score"] .field-error`
		p.do("the score error", chromedp.WaitVisible(chromedp.CSS(scoreErr)))
		if got := p.text(scoreErr); !strings.Contains(got, "Pick one") || strings.Contains(got, "integer") {
			t.Errorf("score error %q", got)
		}
		if got := eval[string](p, `document.querySelector('`+rating+` .chips.scale').getAttribute("aria-invalid")`); got != "true" {
			t.Errorf("scale aria-invalid=%q", got)
		}

		p.do("pick 4", chromedp.Click(chromedp.CSS(rating+` .chip[data-value="4"]`)))
		if got := eval[string](p, `document.querySelector('`+rating+` .chip[data-value="4"]').getAttribute("aria-pressed")`); got != "true" {
			t.Errorf("4 aria-pressed=%s after a click", got)
		}
		if got := p.text(scoreErr); got != "" {
			t.Errorf("the score error %q stays after a pick", got)
		}
		p.do("pick 3 instead", chromedp.Click(chromedp.CSS(rating+` .chip[data-value="3"]`)), chromedp.Click(chromedp.CSS(rating+` .chip[data-value="4"]`)))
		if n := eval[int](p, `document.querySelectorAll('`+rating+` .chip[aria-pressed="true"]').length`); n != 1 {
			t.Errorf("%d buttons pressed, want one", n)
		}
		p.do("comment and submit",
			chromedp.SendKeys(chromedp.CSS(rating+` textarea[name="comment"]`), "Quick and clear"),
			chromedp.Click(chromedp.CSS(rating+` button[type="submit"]`)))
		checkSubmitted(t, p, "request_rating", map[string]any{"score": 4.0, "comment": "Quick and clear"})
		p.waitFor("the reply", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Thanks for rating!"))`)
	})

	// On a phone: an 11-point scale without comment, answered from the
	// keyboard, fits without sideways scroll.
	t.Run("RatingPhone", func(t *testing.T) {
		p := newPage(t, browser)
		p.do("390×844", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		p.open(startServer(t, catalog, []agent.ScriptEntry{
			{Kind: "toolCall", Name: "request_rating", Arguments: `{"question":"How likely are you to recommend us?","scale":{"min":0,"max":10},"reason":"to learn"}`},
			{Kind: "text", Text: "Noted."},
		}))
		p.say("rate", true)
		p.do("the rating card", chromedp.WaitVisible(chromedp.CSS(rating+` .chip[data-value="10"]`)))
		if n := eval[int](p, `document.querySelectorAll('`+rating+` .chips.scale .chip').length`); n != 11 {
			t.Errorf("%d scale buttons, want 0 to 10", n)
		}
		if n := eval[int](p, `document.querySelectorAll('`+rating+` textarea, `+rating+` input[type="text"]').length`); n != 0 {
			t.Errorf("%d text boxes: the spec allows no comment", n)
		}
		if eval[bool](p, `!!document.querySelector('`+rating+` .scale-ends')`) {
			t.Error("words for the ends shown, but the spec has none")
		}
		if w := eval[int](p, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("page is %dpx wide on a 390px screen", w)
		}
		if eval[bool](p, `[...document.querySelectorAll('`+rating+` .chip')].some(c => c.getBoundingClientRect().right > innerWidth)`) {
			t.Error("a scale button is off the screen")
		}
		png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		saveScreenshot(t, "rating-390.png", png)
		p.do("press 9 with the keyboard", chromedp.Focus(chromedp.CSS(rating+` .chip[data-value="9"]`)), chromedp.KeyEvent(" "))
		p.do("submit", chromedp.Click(chromedp.CSS(rating+` button[type="submit"]`)))
		checkSubmitted(t, p, "request_rating", map[string]any{"score": 9.0})
	})

	// A kind made here, with no card and no hints but a label, a help text
	// and option names: chips for an enum, a switch for a boolean, inputs
	// for formats, a number box for a wide range.
	t.Run("GenericKind", func(t *testing.T) {
		withSignup := catalogWith(t, catalog, signupKind(t))
		p := newPage(t, browser)
		p.open(startServer(t, withSignup, []agent.ScriptEntry{
			{Kind: "toolCall", Name: "request_signup", Arguments: `{"prompt":"Join the beta?","internalNote":"lead from ads","priority":3,"segments":["paid-social","q3"],"reason":"to sign you up"}`},
			{Kind: "text", Text: "Welcome aboard."},
		}))
		p.say("sign me up", true)
		card := `.card[data-kind="signup"]`
		p.do("the signup card", chromedp.WaitVisible(chromedp.CSS(card+` [data-field="plan"] .chip`)))
		text := p.text(card)
		if !strings.Contains(text, "Join the beta?") {
			t.Errorf("the card does not show its prompt:\n%s", text)
		}
		for _, hidden := range []string{"lead from ads", "Priority", "paid-social", "Segments", "for the CRM", "RFC 5322"} {
			if strings.Contains(text, hidden) {
				t.Errorf("the card shows %q:\n%s", hidden, text)
			}
		}
		if !strings.Contains(text, "We send at most one email a month.") {
			t.Errorf("the help written for people is missing:\n%s", text)
		}
		shape := eval[[]string](p, `[
			'[data-field="plan"] .chips[role="group"] .chip[data-value="team"][aria-pressed="false"]',
			'[data-field="newsletter"] input[type="checkbox"][role="switch"]',
			'input[name="email"][type="email"][autocomplete="email"]',
			'input[name="start"][type="date"]',
			'input[name="site"][type="url"]',
			'[data-field="topics"] .chip[data-value="sso"]',
			'input[name="seats"][type="number"][min="1"][max="1000"]',
		].filter(s => !document.querySelector('`+card+` ' + s))`)
		if len(shape) > 0 {
			t.Fatalf("the signup form lacks %q", shape)
		}
		if got := p.text(card + ` [data-field="plan"] .chip[data-value="team"]`); got != "Team plan" {
			t.Errorf("the team chip reads %q, want its label", got)
		}
		if got := p.text(card + ` [data-field="plan"] legend`); !strings.Contains(got, "Which plan?") {
			t.Errorf("plan legend %q", got)
		}
		p.checkLabels(card)

		p.do("submit bad values",
			chromedp.SendKeys(chromedp.CSS(card+` input[name="email"]`), "nope"),
			chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
		for name, want := range map[string]string{"plan": "Pick one", "email": "Enter an email address"} {
			sel := card + ` [data-field="` + name + `"] .field-error`
			p.do("the "+name+" error", chromedp.WaitVisible(chromedp.CSS(sel)))
			if got := p.text(sel); !strings.Contains(got, want) {
				t.Errorf("%s error %q, want %q", name, got, want)
			}
		}
		if png, err := chromedp.Run(p.ctx, chromedp.ScreenshotScale(chromedp.CSS(card), 1.5)); err == nil {
			saveScreenshot(t, "generic-card.png", png)
		}
		p.do("retype the email", chromedp.Evaluate[chromedp.Void](`document.querySelector('`+card+` input[name="email"]').value = ""`),
			chromedp.SendKeys(chromedp.CSS(card+` input[name="email"]`), "ada@example.com"))
		if got := p.text(card + ` [data-field="email"] .field-error`); got != "" {
			t.Errorf("the email error %q stays as it is fixed", got)
		}

		// A pattern only the server checks: its message reads as a sentence.
		p.do("a code the server rejects",
			chromedp.Click(chromedp.CSS(card+` [data-field="plan"] .chip[data-value="team"]`)),
			chromedp.SendKeys(chromedp.CSS(card+` input[name="code"]`), "abc"),
			chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
		codeErr := card + ` [data-field="code"] .field-error`
		p.do("the code error", chromedp.WaitVisible(chromedp.CSS(codeErr)))
		if got := p.text(codeErr); !strings.Contains(got, "This is not in the expected form.") || strings.Contains(got, "pattern") {
			t.Errorf("code error %q", got)
		}

		p.do("fix and submit",
			chromedp.Evaluate[chromedp.Void](`document.querySelector('`+card+` input[name="code"]').value = ""`),
			chromedp.SendKeys(chromedp.CSS(card+` input[name="code"]`), "ABC"),
			chromedp.Click(chromedp.CSS(card+` [data-field="newsletter"] input`)),
			chromedp.SetValue(chromedp.CSS(card+` input[name="start"]`), "2025-03-01"),
			chromedp.SendKeys(chromedp.CSS(card+` input[name="site"]`), "https://example.com"),
			chromedp.Click(chromedp.CSS(card+` [data-field="topics"] .chip[data-value="sso"]`)),
			chromedp.Click(chromedp.CSS(card+` [data-field="topics"] .chip[data-value="pricing"]`)),
			chromedp.SendKeys(chromedp.CSS(card+` input[name="seats"]`), "12"),
			chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
		checkSubmitted(t, p, "request_signup", map[string]any{
			"plan": "team", "newsletter": true, "email": "ada@example.com", "start": "2025-03-01",
			"site": "https://example.com", "topics": []any{"pricing", "sso"}, "seats": 12.0, "code": "ABC"})
		p.waitFor("the reply", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Welcome aboard."))`)
	})
}

// TestCardOptionsFromSpec: a pick whose options the agent writes in the
// spec (an x-ui options hint) is a row of chips named by their labels; the
// list itself is not repeated as text.
func TestCardOptionsFromSpec(t *testing.T) {
	chromium(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	const values = `{"type":"object","required":["choice"],"additionalProperties":false,"properties":{
		"choice":{"type":"string","description":"The id of the option picked.","x-ui":{"label":"Your pick","options":{"from":"/choices","value":"id","label":"text"}}}}}`
	vote, err := kindkit.NewKind[map[string]any, map[string]any](kindkit.Descriptor{
		Name: "vote", Capability: "vote_card", ToolName: "request_vote", Source: "test/vote.schema.json",
		ToolSchema: `{"type":"object","properties":{"prompt":{"type":"string"},"choices":{"type":"array"},"reason":{"type":"string"}},"required":["prompt","choices","reason"]}`,
		Schema: `{"$defs":{"Spec":{"type":"object","required":["prompt","choices"],"properties":{"prompt":{"type":"string"},"choices":{"type":"array"}}},
			"Values":` + values + `}}`,
		ValuesSchema: values,
	}, surveyRules{})
	if err != nil {
		t.Fatal(err)
	}
	withVote := catalogWith(t, catalog, vote)
	browser := startBrowser(t)
	p := newPage(t, browser)
	p.open(startServer(t, withVote, []agent.ScriptEntry{
		{Kind: "toolCall", Name: "request_vote", Arguments: `{"prompt":"Lunch?","choices":[{"id":"a","text":"Pizza"},{"id":"b","text":"Soup"}],"reason":"to order"}`},
		{Kind: "text", Text: "Soup it is."},
	}))
	p.say("lunch?", true)
	card := `.card[data-kind="vote"]`
	p.do("the vote card", chromedp.WaitVisible(chromedp.CSS(card+` .chip[data-value="b"]`)))
	chips := eval[[]string](p, `[...document.querySelectorAll('`+card+` .chip')].map(c => c.dataset.value + "=" + c.innerText)`)
	if strings.Join(chips, ",") != "a=Pizza,b=Soup" {
		t.Errorf("chips %q", chips)
	}
	if got := p.text(card); strings.Contains(got, "a — Pizza") || !strings.Contains(got, "Lunch?") {
		t.Errorf("card text:\n%s", got)
	}
	p.checkLabels(card)
	p.do("pick Soup", chromedp.Click(chromedp.CSS(card+` .chip[data-value="b"]`)), chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	checkSubmitted(t, p, "request_vote", map[string]any{"choice": "b"})
}

// checkSubmitted waits for the raise tool's result (its line is hidden in
// the transcript, but in the page) and compares the values it carries.
func checkSubmitted(t *testing.T, p *page, tool string, want map[string]any) {
	t.Helper()
	p.waitFor("the tool result", `document.querySelector('.tool[data-tool="`+tool+`"][data-state="done"]')`)
	result := eval[string](p, `[...document.querySelectorAll('.tool[data-tool="`+tool+`"] pre')].pop().textContent`)
	var got struct {
		Status string         `json:"status"`
		Values map[string]any `json:"values"`
	}
	if err := json.Unmarshal([]byte(result), &got); err != nil {
		t.Fatalf("tool result %q: %v", result, err)
	}
	if got.Status != "submitted" || !jsonEqual(got.Values, want) {
		t.Errorf("submitted %s\nwant values %v", result, want)
	}
}

// signupValues is the test kind's Values: an enum with option names, a
// boolean with help for people, formats, an enum list, a wide integer
// range, a pattern, and descriptions written for developers.
const signupValues = `{"type":"object","required":["plan","email"],"additionalProperties":false,"properties":{
	"plan":{"type":"string","enum":["basic","pro","team"],"description":"Plan id for the CRM.",
		"x-ui":{"label":"Which plan?","labels":{"basic":"Basic","pro":"Pro","team":"Team plan"}}},
	"newsletter":{"type":"boolean","description":"Opt-in flag for the CRM.","x-ui":{"help":"We send at most one email a month."}},
	"email":{"type":"string","format":"email","description":"RFC 5322 address."},
	"start":{"type":"string","format":"date"},
	"site":{"type":"string","format":"uri"},
	"topics":{"type":"array","items":{"type":"string","enum":["pricing","security","sso"]}},
	"seats":{"type":"integer","minimum":1,"maximum":1000},
	"code":{"type":"string","pattern":"^[A-Z]{3}$"}}}`

func signupKind(t *testing.T) kindkit.Kind {
	t.Helper()
	k, err := kindkit.NewKind[map[string]any, map[string]any](kindkit.Descriptor{
		Name: "signup", Capability: "signup_form", ToolName: "request_signup", Source: "test/signup.schema.json",
		ToolSchema: `{"type":"object","properties":{"prompt":{"type":"string"},"internalNote":{"type":"string"},"priority":{"type":"integer"},"segments":{"type":"array","items":{"type":"string"}},"reason":{"type":"string"}},"required":["prompt","reason"]}`,
		Schema: `{"$defs":{
			"Spec":{"type":"object","required":["prompt"],"additionalProperties":false,"properties":{
				"prompt":{"type":"string"},"internalNote":{"type":"string"},"priority":{"type":"integer"},
				"segments":{"type":"array","items":{"type":"string"}}}},
			"Values":` + signupValues + `}}`,
		ValuesSchema: signupValues,
	}, surveyRules{})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestCardSchemaFromSpec: with an x-ui schemaFrom hint the form is drawn
// from the schema the spec carries, as an MCP server's elicitation does
// (its requestedSchema, written for people): titles are the labels,
// descriptions the help, defaults are filled in, titled and named options
// are chips with their names, a small integer range is a row of buttons;
// the kind's own Values schema draws nothing, and nothing in the schema
// runs as HTML.
func TestCardSchemaFromSpec(t *testing.T) {
	chromium(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	const values = `{"type":"object","description":"The content object, for the model.",
		"x-ui":{"title":"A form from a tool","schemaFrom":"/requestedSchema"},
		"properties":{"ignored":{"type":"string","x-ui":{"label":"Drawn from values.json"}}}}`
	form, err := kindkit.NewKind[map[string]any, map[string]any](kindkit.Descriptor{
		Name: "mcp_form", Capability: "mcp_form", ToolName: "request_mcp_form", Source: "test/mcp_form.schema.json",
		ToolSchema: `{"type":"object","properties":{"message":{"type":"string"},"requestedSchema":{"type":"object"},"server":{"type":"string"},"reason":{"type":"string"}},"required":["message","requestedSchema","reason"]}`,
		Schema: `{"$defs":{"Spec":{"type":"object","required":["message","requestedSchema"],"properties":{
			"message":{"type":"string"},"requestedSchema":{"type":"object"},"server":{"type":"string"}}},
			"Values":` + values + `}}`,
		ValuesSchema: values,
	}, surveyRules{})
	if err != nil {
		t.Fatal(err)
	}
	withForm := catalogWith(t, catalog, form)
	const requested = `{"type":"object","required":["email","topics"],"properties":{
		"name":{"type":"string","title":"Your name","description":"As printed on your badge.","minLength":2,"default":"Ada"},
		"email":{"type":"string","format":"email","title":"Work email"},
		"plan":{"type":"string","title":"Plan","enum":["basic","pro"],"enumNames":["Basic","Pro"],"default":"pro"},
		"size":{"type":"string","title":"Team size","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]},
		"seats":{"type":"integer","title":"Seats","minimum":1,"maximum":5,"default":2},
		"budget":{"type":"number","title":"Budget <b>USD</b>","minimum":0,"maximum":10000},
		"urgent":{"type":"boolean","title":"Urgent","default":true},
		"topics":{"type":"array","title":"Topics","minItems":1,"default":["sso"],
			"items":{"anyOf":[{"const":"pricing","title":"Pricing"},{"const":"sso","title":"Single sign-on"}]}},
		"start":{"type":"string","format":"date","title":"Start"},
		"site":{"type":"string","format":"uri","title":"Website"}}}`
	args, err := json.Marshal(map[string]any{"message": "Tell us about your team.", "requestedSchema": json.RawMessage(requested),
		"server": "acme", "reason": "the acme tool asks"})
	if err != nil {
		t.Fatal(err)
	}
	browser := startBrowser(t)
	p := newPage(t, browser)
	p.open(startServer(t, withForm, []agent.ScriptEntry{
		{Kind: "toolCall", Name: "request_mcp_form", Arguments: string(args)},
		{Kind: "text", Text: "Got it."},
	}))
	p.say("set me up", true)
	card := `.card[data-kind="mcp_form"]`
	p.do("the form card", chromedp.WaitVisible(chromedp.CSS(card+` [data-field="plan"] .chip`)))
	text := p.text(card)
	for _, want := range []string{"Tell us about your team.", "A form from a tool", "Your name", "As printed on your badge.", "Work email", "Team size", "Budget <b>USD</b>"} {
		if !strings.Contains(text, want) {
			t.Errorf("the card lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Drawn from values.json") {
		t.Errorf("the card draws the kind's own Values schema:\n%s", text)
	}
	if n := eval[int](p, `document.querySelectorAll('`+card+` .card-body b').length`); n != 0 {
		t.Errorf("%d <b> elements: a title ran as HTML", n)
	}
	shape := eval[[]string](p, `[
		'input[name="name"][type="text"]',
		'input[name="email"][type="email"]',
		'[data-field="plan"] .chip[data-value="pro"][aria-pressed="true"]',
		'[data-field="plan"] .chip[data-value="basic"][aria-pressed="false"]',
		'[data-field="size"] .chip[data-value="l"][aria-pressed="false"]',
		'[data-field="seats"] .chips.scale .chip[data-value="2"][aria-pressed="true"]',
		'input[name="budget"][type="number"][min="0"][max="10000"]',
		'[data-field="urgent"] input[role="switch"]:checked',
		'[data-field="topics"] .chip[data-value="sso"][aria-pressed="true"]',
		'[data-field="topics"] .chip[data-value="pricing"][aria-pressed="false"]',
		'input[name="start"][type="date"]',
		'input[name="site"][type="url"]',
	].filter(s => !document.querySelector('`+card+` ' + s))`)
	if len(shape) > 0 {
		t.Fatalf("the form lacks %q", shape)
	}
	// The field order is the spec's as the server sends it (a map here,
	// so sorted by key); within a field the options keep theirs.
	chips := eval[[]string](p, `[...document.querySelectorAll('`+card+` .chip')].map(c => c.innerText)`)
	if got := strings.Join(chips, ","); got != "Basic,Pro,1,2,3,4,5,Small,Large,Pricing,Single sign-on" {
		t.Errorf("chips %q, want the options' names", got)
	}
	if got := eval[string](p, `document.querySelector('`+card+` input[name="name"]').value`); got != "Ada" {
		t.Errorf("name box holds %q, want its default", got)
	}
	p.checkLabels(card)

	// The schema's own checks, before the server sees anything.
	p.do("submit without an email", chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	emailErr := card + ` [data-field="email"] .field-error`
	p.do("the email error", chromedp.WaitVisible(chromedp.CSS(emailErr)))
	if got := p.text(emailErr); !strings.Contains(got, "required") {
		t.Errorf("email error %q", got)
	}
	p.do("fill and submit",
		chromedp.SendKeys(chromedp.CSS(card+` input[name="email"]`), "ada@example.com"),
		chromedp.Click(chromedp.CSS(card+` [data-field="size"] .chip[data-value="l"]`)),
		chromedp.Click(chromedp.CSS(card+` [data-field="topics"] .chip[data-value="pricing"]`)),
		chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	checkSubmitted(t, p, "request_mcp_form", map[string]any{
		"name": "Ada", "email": "ada@example.com", "plan": "pro", "size": "l", "seats": 2.0, "urgent": true,
		"topics": []any{"pricing", "sso"}})
}
