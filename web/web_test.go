package web_test

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/web"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type kindEntry struct {
	Name         string          `json:"name"`
	Capability   string          `json:"capability"`
	ToolName     string          `json:"toolName"`
	ToolSchema   map[string]any  `json:"toolSchema"`
	ValuesSchema json.RawMessage `json:"valuesSchema"`
}

func get(t *testing.T, h http.Handler, method, target string, hdr map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// /kinds lists every kind of the catalog with the tool schema and the Values
// schema kindgen derived for it (gen/<kind>gen/tool.json, values.json), served
// as they are: local $refs inlined, properties in the schema's order.
func TestKindsJSON(t *testing.T) {
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	r := get(t, web.Handler(catalog), http.MethodGet, "/kinds", nil)
	if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /kinds: %d %s", r.StatusCode, r.Header.Get("Content-Type"))
	}
	raw := body(t, r)
	var got []kindEntry
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	if len(got) != len(catalog.Kinds()) {
		t.Fatalf("%d entries, want one per kind (%d)", len(got), len(catalog.Kinds()))
	}
	for i, k := range catalog.Kinds() {
		d := k.Descriptor()
		e := got[i]
		if e.Name != d.Name || e.Capability != d.Capability || e.ToolName != d.ToolName {
			t.Errorf("entry %d = %s/%s/%s, want %s/%s/%s", i, e.Name, e.Capability, e.ToolName, d.Name, d.Capability, d.ToolName)
		}
		var want map[string]any
		if err := json.Unmarshal([]byte(d.ToolSchema), &want); err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(e.ToolSchema, want) {
			t.Errorf("%s: toolSchema differs from the descriptor's", d.Name)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(d.ValuesSchema)); err != nil || compact.String() != string(e.ValuesSchema) {
			t.Errorf("%s: valuesSchema %s is not the descriptor's %s (%v)", d.Name, e.ValuesSchema, d.ValuesSchema, err)
		}
		if strings.Contains(string(e.ValuesSchema), `"$ref"`) {
			t.Errorf("%s: valuesSchema still has a $ref: %s", d.Name, e.ValuesSchema)
		}
		var vs map[string]any
		if err := json.Unmarshal(e.ValuesSchema, &vs); err != nil || vs["type"] != "object" {
			t.Errorf("%s: valuesSchema %s is not an object schema (%v)", d.Name, e.ValuesSchema, err)
		}
	}

	byName := map[string]kindEntry{}
	for _, e := range got {
		byName[e.Name] = e
	}
	// choices: answers[] items are the inlined Answer definition.
	var choices struct {
		Required   []string `json:"required"`
		Properties struct {
			Answers struct {
				Type  string `json:"type"`
				Items struct {
					Title      string                     `json:"title"`
					Required   []string                   `json:"required"`
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"items"`
			} `json:"answers"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(byName["choices"].ValuesSchema, &choices); err != nil {
		t.Fatal(err)
	}
	a := choices.Properties.Answers
	if a.Type != "array" || a.Items.Title != "ChoicesAnswer" || len(a.Items.Properties) != 3 ||
		strings.Join(a.Items.Required, ",") != "header" || strings.Join(choices.Required, ",") != "answers" {
		t.Errorf("choices valuesSchema: %s", byName["choices"].ValuesSchema)
	}
	// identity_intake: the fields keep the schema's order (name, email, phone).
	s := string(byName["identity_intake"].ValuesSchema)
	if n, e, p := strings.Index(s, `"name":`), strings.Index(s, `"email":`), strings.Index(s, `"phone":`); !(n >= 0 && n < e && e < p) {
		t.Errorf("identity_intake properties out of order: %s", s)
	}
}

func TestKindsNilCatalog(t *testing.T) {
	r := get(t, web.Handler(nil), http.MethodGet, "/kinds", nil)
	if b := body(t, r); r.StatusCode != 200 || strings.TrimSpace(b) != "[]" {
		t.Errorf("GET /kinds with no catalog: %d %q", r.StatusCode, b)
	}
}

func TestStatic(t *testing.T) {
	h := web.Handler(nil)
	cases := []struct {
		path, ctype, contains string
	}{
		{"/", "text/html", `<script type="module" src="static/app.js">`},
		{"/static/app.js", "javascript", `from "./js/chat/main.js"`},
		{"/static/js/chat/cards.js", "javascript", "submit_interaction"},
		{"/static/js/renderers/generic.js", "javascript", "renderGeneric"},
		{"/static/style.css", "text/css", ":focus-visible"},
		{"/answer", "text/html", `<script type="module" src="static/answer.js">`},
		{"/static/answer.js", "javascript", `from "./js/card/card.js"`},
		{"/inbox", "text/html", `<script type="module" src="static/inbox.js">`},
		{"/static/inbox.js", "javascript", `from "./js/card/card.js"`},
	}
	for _, c := range cases {
		r := get(t, h, http.MethodGet, c.path, nil)
		b := body(t, r)
		if r.StatusCode != 200 || !strings.Contains(r.Header.Get("Content-Type"), c.ctype) || !strings.Contains(b, c.contains) {
			t.Errorf("GET %s: %d %q, body has %q: %v", c.path, r.StatusCode, r.Header.Get("Content-Type"), c.contains, strings.Contains(b, c.contains))
		}
		etag := r.Header.Get("ETag")
		if etag == "" {
			t.Errorf("GET %s: no ETag", c.path)
			continue
		}
		if r := get(t, h, http.MethodGet, c.path, map[string]string{"If-None-Match": etag}); r.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s with its ETag: %d, want 304", c.path, r.StatusCode)
		}
	}
	for _, p := range []string{"/", "/answer", "/inbox"} {
		if csp := get(t, h, http.MethodGet, p, nil).Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("%s: page CSP %q", p, csp)
		}
	}
	for _, p := range []string{"/static/", "/static/nope.js", "/index.html", "/static/answer.html", "/static/inbox.html", "/inbox/", "/ws", "/static/../web.go"} {
		if r := get(t, h, http.MethodGet, p, nil); r.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, r.StatusCode)
		}
	}
	if r := get(t, h, http.MethodPost, "/", nil); r.StatusCode != http.StatusMethodNotAllowed || r.Header.Get("Allow") == "" {
		t.Errorf("POST /: %d allow %q", r.StatusCode, r.Header.Get("Allow"))
	}
	if r := get(t, h, http.MethodHead, "/kinds", nil); r.StatusCode != 200 || body(t, r) != "" {
		t.Errorf("HEAD /kinds: %d", r.StatusCode)
	}
}

// The page embeds no external URL: it must work on a closed network.
func TestNoExternalURLs(t *testing.T) {
	h := web.Handler(nil)
	paths := []string{"/", "/static/app.js", "/static/style.css"}
	err := fs.WalkDir(os.DirFS("static"), "js", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			paths = append(paths, "/static/"+p)
		}
		return err
	})
	if err != nil || len(paths) < 10 {
		t.Fatalf("the page's modules: %v %v", paths, err)
	}
	for _, p := range paths {
		b := body(t, get(t, h, http.MethodGet, p, nil))
		for _, bad := range []string{"http://", "https://", "//cdn", "@import"} {
			if strings.Contains(b, bad) {
				t.Errorf("%s contains %q", p, bad)
			}
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// WithTitle names the page, escaped, in its title and its heading.
func TestTitle(t *testing.T) {
	srv := httptest.NewServer(web.Handler(nil, web.WithTitle("Acme <support>")))
	defer srv.Close()
	res, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	page := string(body)
	for _, want := range []string{"<title>Acme &lt;support&gt;</title>", "<h1>Acme &lt;support&gt;</h1>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(page, "kindkit chat") || strings.Contains(page, "<support>") {
		t.Error("the page still says kindkit chat, or shows the title unescaped")
	}
}
