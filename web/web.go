package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"html"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/kindkit/kindkit"
)

//go:embed static
var staticFiles embed.FS

// asset is one embedded file, read once.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

func newAsset(name string, body []byte) asset {
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = http.DetectContentType(body)
	}
	sum := sha256.Sum256(body)
	return asset{body: body, contentType: ct, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
}

// contentSecurityPolicy keeps the page to its own origin: its scripts,
// styles and socket (ws: and wss: for browsers whose 'self' does not yet
// cover WebSocket URLs).
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self' ws: wss:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

type handler struct {
	assets map[string]asset // URL path → file
	kinds  asset
	err    error // building /kinds failed
}

// An Option tunes the page Handler serves.
type Option func(*options)

type options struct{ title string }

// WithTitle names the page (its title and its heading) instead of
// "kindkit chat": your product's, say.
func WithTitle(title string) Option { return func(o *options) { o.title = title } }

// Handler serves the chat page at /, the answer page of one-time links at
// /answer, the inbox page at /inbox, their assets under /static/ and the
// catalog at /kinds. The catalog is read once, here; a nil catalog serves
// an empty list.
func Handler(catalog *kindkit.Catalog, opts ...Option) http.Handler {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	h := &handler{assets: map[string]asset{}}
	err := fs.WalkDir(staticFiles, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := staticFiles.ReadFile(p)
		if err != nil {
			return err
		}
		h.assets["/"+p] = newAsset(p, body)
		return nil
	})
	if err != nil {
		panic("web: read embedded files: " + err.Error()) // the embed is part of the binary
	}
	page := h.assets["/static/index.html"]
	delete(h.assets, "/static/index.html")
	if o.title != "" {
		body := bytes.Replace(page.body, []byte("<title>kindkit chat</title>"), []byte("<title>"+html.EscapeString(o.title)+"</title>"), 1)
		body = bytes.Replace(body, []byte(`<h1>kindkit <span class="sub">chat</span></h1>`), []byte("<h1>"+html.EscapeString(o.title)+"</h1>"), 1)
		page = newAsset("index.html", body)
	}
	h.assets["/"] = page
	// The answer page of one-time links (package link serves its calls
	// under /answer/).
	h.assets["/answer"] = h.assets["/static/answer.html"]
	delete(h.assets, "/static/answer.html")
	// The inbox page (package inbox serves its calls under /inbox/).
	h.assets["/inbox"] = h.assets["/static/inbox.html"]
	delete(h.assets, "/static/inbox.html")

	body, err := kindsJSON(catalog)
	if err != nil {
		h.err = err
	} else {
		h.kinds = newAsset("kinds.json", body)
	}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var a asset
	switch p := r.URL.Path; {
	case p == "/kinds":
		if h.err != nil {
			http.Error(w, "web: "+h.err.Error(), http.StatusInternalServerError)
			return
		}
		a = h.kinds
	default:
		var ok bool
		if a, ok = h.assets[p]; !ok {
			http.NotFound(w, r)
			return
		}
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", a.contentType)
	hd.Set("ETag", a.etag)
	hd.Set("Cache-Control", "no-cache") // revalidate: a new binary serves new files
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	if r.URL.Path == "/" || r.URL.Path == "/answer" || r.URL.Path == "/inbox" {
		hd.Set("Content-Security-Policy", contentSecurityPolicy)
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}

// kindEntry is one kind in /kinds.
type kindEntry struct {
	Name         string          `json:"name"`
	Capability   string          `json:"capability"`
	ToolName     string          `json:"toolName"`
	ToolSchema   json.RawMessage `json:"toolSchema"`
	ValuesSchema json.RawMessage `json:"valuesSchema"`
}

// kindsJSON lists the catalog with the schemas kindgen derived for each
// kind; nothing is derived here.
func kindsJSON(catalog *kindkit.Catalog) ([]byte, error) {
	entries := []kindEntry{}
	if catalog != nil {
		for _, k := range catalog.Kinds() {
			d := k.Descriptor()
			entries = append(entries, kindEntry{Name: d.Name, Capability: d.Capability, ToolName: d.ToolName,
				ToolSchema: rawOrNull(d.ToolSchema), ValuesSchema: rawOrNull(d.ValuesSchema)})
		}
	}
	return json.Marshal(entries)
}

// rawOrNull is a schema as raw JSON, or null when a kind has none.
func rawOrNull(s string) json.RawMessage {
	if strings.TrimSpace(s) == "" {
		return json.RawMessage("null")
	}
	return json.RawMessage(s)
}
