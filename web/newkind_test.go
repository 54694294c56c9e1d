package web_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/kindgen"
	"github.com/kindkit/kindkit/kinds"
)

// TestNewKindCard: a kind just made by kindgen new, generated as go
// generate would, is usable in the page with no JavaScript and no edit:
// a heading for people, its prompt, a labelled answer box, the schema's
// checks before sending, and a submit that reaches the turn.
func TestNewKindCard(t *testing.T) {
	chromium(t)
	root := t.TempDir()
	const module = "example.com/acme/mykinds"
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module "+module+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := kindgen.NewKind(root, "feature_wish"); err != nil {
		t.Fatal(err)
	}
	out, err := kindgen.Generate(root, module)
	if err != nil {
		t.Fatal(err)
	}
	file := func(name string) string {
		t.Helper()
		b, ok := out.Files["gen/featurewishgen/"+name]
		if !ok {
			t.Fatalf("kindgen wrote no gen/featurewishgen/%s", name)
		}
		return string(b)
	}
	var doc struct {
		XKind struct{ Name, Capability, Tool string } `json:"x-kind"`
	}
	if err := json.Unmarshal([]byte(file("schema.json")), &doc); err != nil {
		t.Fatal(err)
	}
	wish, err := kindkit.NewKind[map[string]any, map[string]any](kindkit.Descriptor{
		Name: doc.XKind.Name, Capability: doc.XKind.Capability, ToolName: doc.XKind.Tool,
		Source: "spec/interactions/feature-wish.schema.json", Schema: file("schema.json"),
		ToolSchema: file("tool.json"), ValuesSchema: file("values.json"),
	}, surveyRules{})
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	withWish := catalogWith(t, catalog, wish)
	browser := startBrowser(t)
	p := newPage(t, browser)
	p.open(startServer(t, withWish, []agent.ScriptEntry{
		{Kind: "toolCall", Name: "request_feature_wish", Arguments: `{"prompt":"What should we build next?","reason":"to plan the next release"}`},
		{Kind: "text", Text: "Noted, thanks."},
	}))
	p.say("I have an idea", true)
	card := `.card[data-kind="feature_wish"]`
	p.do("the new kind's card", chromedp.WaitVisible(chromedp.CSS(card+` textarea[name="answer"]`)))
	if got := p.text(card + ` .card-title`); got != "Feature wish" {
		t.Errorf("heading %q", got)
	}
	text := p.text(card)
	if !strings.Contains(text, "What should we build next?") {
		t.Errorf("the card does not ask its prompt:\n%s", text)
	}
	if strings.Contains(text, "The person's answer.") {
		t.Errorf("the card shows the description written for the model:\n%s", text)
	}
	if got := eval[string](p, `document.querySelector('`+card+` textarea[name="answer"]').labels[0].innerText`); !strings.Contains(got, "Your answer") {
		t.Errorf("answer label %q", got)
	}
	p.checkLabels(card)
	p.do("send it empty", chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	p.do("the error", chromedp.WaitVisible(chromedp.CSS(card+` [data-field="answer"] .field-error`)))
	if got := p.text(card + ` [data-field="answer"] .field-error`); got != "This is required." {
		t.Errorf("error %q", got)
	}
	p.do("answer", chromedp.SendKeys(chromedp.CSS(card+` textarea[name="answer"]`), "Dark mode"),
		chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	checkSubmitted(t, p, "request_feature_wish", map[string]any{"answer": "Dark mode"})
	p.waitFor("the reply", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Noted, thanks."))`)
	if got := p.text(card + ` .card-status`); got != "Your answer: Dark mode" {
		t.Errorf("summary %q", got)
	}
}
