package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/web"
)

// TestModuleLayers runs dependency-cruiser (scripts/depcruise.sh) over
// the page's modules with web/depcruise.json: no module imports another in
// a circle, and none imports a layer above its own (core, renderers,
// card, chat, entry points). It then runs it over testdata/badlayers, a
// tree that breaks every rule, to see each one fail.
func TestModuleLayers(t *testing.T) {
	bin := os.Getenv("KINDKIT_TEST_DEPCRUISE")
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("KINDKIT_TEST_DEPCRUISE is not set in CI: install dependency-cruiser with scripts/depcruise.sh")
		}
		t.Skip("KINDKIT_TEST_DEPCRUISE is not set: run scripts/depcruise.sh")
	}
	cruise := func(dir string, args ...string) (string, error) {
		cmd := exec.Command("node", append([]string{bin, "--no-progress", "--config", "depcruise.json"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := cruise(".", "static", "testdata/cards.js"); err != nil {
		t.Fatalf("the page's modules break their layers: %v\n%s", err, out)
	}

	// The check can fail: each rule catches what it is for.
	bad := t.TempDir()
	if err := os.CopyFS(bad, os.DirFS("testdata/badlayers")); err != nil {
		t.Fatal(err)
	}
	config, err := os.ReadFile("depcruise.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad+"/depcruise.json", config, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := cruise(bad, "static", "testdata")
	if err == nil {
		t.Fatalf("a tree that breaks every rule passed:\n%s", out)
	}
	for _, rule := range []string{"no-circular", "not-to-unresolvable", "core-imports-core", "renderers-import-core", "chat-imports-below", "test-page-draws-cards-only", "answer-page-draws-cards-only"} {
		if !strings.Contains(out, "error "+rule+":") {
			t.Errorf("rule %s caught nothing in testdata/badlayers:\n%s", rule, out)
		}
	}
}

// TestCardsAlone draws every kind's card on a page that imports only the
// card and the renderers (testdata/cards.html), as a link page or an
// inbox does: from a spec, with earlier values, with errors, and closed
// with an outcome. It reads each card's values back, and the page opens no
// socket and loads none of the chat's modules.
func TestCardsAlone(t *testing.T) {
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/testdata/", http.FileServer(http.Dir(".")))
	mux.Handle("/", web.Handler(catalog))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	p := newPage(t, startBrowser(t))
	p.do("open the cards page", chromedp.Navigate(srv.URL+"/testdata/cards.html"))
	p.waitFor("the catalog", `window.cards && window.cards.loaded`)

	type result struct {
		Submitted   []map[string]any  `json:"submitted"`
		FieldErrors map[string]string `json:"fieldErrors"`
		General     string            `json:"general"`
	}
	draw := func(kind, spec, values string) int {
		t.Helper()
		return eval[int](p, fmt.Sprintf(`cards.draw(%q, %s, %s)`, kind, spec, values))
	}
	submit := func(i int) result {
		t.Helper()
		return eval[result](p, fmt.Sprintf(`cards.submit(%d)`, i))
	}
	values := func(t *testing.T, r result) any {
		t.Helper()
		if len(r.Submitted) != 1 || len(r.FieldErrors) != 0 || r.General != "" {
			t.Fatalf("submit: %+v, want one submit and no error", r)
		}
		return r.Submitted[0]["values"]
	}
	asJSON := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}

	t.Run("choices", func(t *testing.T) {
		spec := `{"questions":[{"question":"Which plan?","header":"Plan","options":["Basic","Pro"]},
			{"question":"Which topics?","header":"Topics","options":[{"label":"Pricing"},{"label":"SSO"}],"multiSelect":true}]}`
		earlier := `{"answers":[{"header":"Plan","options":["Pro"]},{"header":"Topics","options":["Pricing","SSO"],"other":"Audit logs"}]}`
		i := draw("choices", spec, earlier)
		if diff := cmp.Diff(asJSON(earlier), values(t, submit(i))); diff != "" {
			t.Errorf("earlier values read back (-drawn +read):\n%s", diff)
		}
		fresh := draw("choices", spec, "undefined")
		want := asJSON(`{"answers":[{"header":"Plan","options":[]},{"header":"Topics","options":[]}]}`)
		if diff := cmp.Diff(want, values(t, submit(fresh))); diff != "" {
			t.Errorf("an empty card's values (-want +got):\n%s", diff)
		}
		got := eval[result](p, fmt.Sprintf(`cards.showErrors(%d, [{field: "Plan", message: "pick at least one option, or declined=true"}], "Some answers need attention.")`, fresh))
		if got.FieldErrors["Plan"] != "Pick at least one option, or decline the card." || got.General != "Some answers need attention." {
			t.Errorf("server errors shown as %+v", got)
		}
	})

	t.Run("identity_intake", func(t *testing.T) {
		spec := `{"fields":["name","email",{"key":"phone","required":false}]}`
		i := draw("identity_intake", spec, `{"name":"Ada","email":"ada@example.com"}`)
		if diff := cmp.Diff(asJSON(`{"name":"Ada","email":"ada@example.com"}`), values(t, submit(i))); diff != "" {
			t.Errorf("earlier values read back (-drawn +read):\n%s", diff)
		}
		got := eval[result](p, fmt.Sprintf(`cards.showErrors(%d, [{field: "email", message: "must be a valid email address"}], "")`, i))
		if got.FieldErrors["email"] != "Must be a valid email address." {
			t.Errorf("a field's server error shown as %+v", got)
		}
		if s := eval[string](p, fmt.Sprintf(`cards.close(%d, {status: "submitted", values: {name: "Ada", email: "ada@example.com"}})`, i)); s != "Name: Ada · Email: ada@example.com" {
			t.Errorf("closed with %q", s)
		}
	})

	t.Run("rating (generic)", func(t *testing.T) {
		spec := `{"question":"How was it?","scale":{"min":1,"max":5,"minLabel":"Poor","maxLabel":"Great"},"allowComment":true}`
		i := draw("rating", spec, `{"score":4,"comment":"Quick and kind."}`)
		if diff := cmp.Diff(asJSON(`{"score":4,"comment":"Quick and kind."}`), values(t, submit(i))); diff != "" {
			t.Errorf("earlier values read back (-drawn +read):\n%s", diff)
		}
		empty := draw("rating", spec, "undefined")
		got := submit(empty)
		if len(got.Submitted) != 0 || got.FieldErrors["score"] != "Pick one; this is required." || got.General != "Some fields need attention." {
			t.Errorf("an empty required score: %+v, want no submit and the field's error", got)
		}
		if s := eval[string](p, fmt.Sprintf(`cards.close(%d, {status: "no_response"})`, empty)); s != "No answer in time." {
			t.Errorf("closed with %q", s)
		}
	})

	t.Run("elicitation (a requested schema)", func(t *testing.T) {
		spec := `{"server":"everything","message":"Your details","requestedSchema":{"type":"object",
			"properties":{"name":{"type":"string","title":"Name"},"age":{"type":"integer","title":"Age","minimum":0,"maximum":150},
			"color":{"type":"string","enum":["red","green"],"enumNames":["Red","Green"]},"ok":{"type":"boolean"}},"required":["name"]}}`
		earlier := `{"name":"Ada","age":36,"color":"green","ok":true}`
		i := draw("elicitation", spec, earlier)
		if diff := cmp.Diff(asJSON(earlier), values(t, submit(i))); diff != "" {
			t.Errorf("earlier values read back (-drawn +read):\n%s", diff)
		}
	})

	t.Run("elicitation (a link)", func(t *testing.T) {
		i := draw("elicitation", `{"server":"everything","message":"Sign in there","mode":"url","url":"https://example.com/auth"}`, "undefined")
		if got := eval[string](p, fmt.Sprintf(`document.querySelectorAll(".card")[%d].innerText`, i)); !strings.Contains(got, "example.com") || !strings.Contains(got, "Done") {
			t.Errorf("the link card reads %q", got)
		}
		if diff := cmp.Diff(map[string]any{}, values(t, submit(i))); diff != "" {
			t.Errorf("a link's values (-want +got):\n%s", diff)
		}
	})

	if n := eval[int](p, `window.socketsOpened`); n != 0 {
		t.Errorf("drawing cards opened %d sockets", n)
	}
	modules := eval[[]string](p, `cards.modules()`)
	for _, m := range modules {
		if strings.Contains(m, "/js/chat/") || strings.HasSuffix(m, "/app.js") {
			t.Errorf("the cards page loaded %s", m)
		}
	}
	if !strings.Contains(strings.Join(modules, " "), "/static/js/renderers/generic.js") {
		t.Errorf("the page's modules, as loaded: %v", modules)
	}
}
