package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
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

// Handler serves the chat page at /, its assets under /static/ and the
// catalog at /kinds. The catalog is read once, here; a nil catalog serves an
// empty list.
func Handler(catalog *kindkit.Catalog) http.Handler {
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
	h.assets["/"] = h.assets["/static/index.html"]
	delete(h.assets, "/static/index.html")

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
	if r.URL.Path == "/" {
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

func kindsJSON(catalog *kindkit.Catalog) ([]byte, error) {
	entries := []kindEntry{}
	if catalog != nil {
		for _, k := range catalog.Kinds() {
			d := k.Descriptor()
			tool, err := compactObject(d.ToolSchema)
			if err != nil {
				return nil, fmt.Errorf("kind %s: tool schema: %w", d.Name, err)
			}
			values, err := ValuesSchema(d.Schema)
			if err != nil {
				return nil, fmt.Errorf("kind %s: %w", d.Name, err)
			}
			entries = append(entries, kindEntry{Name: d.Name, Capability: d.Capability, ToolName: d.ToolName,
				ToolSchema: tool, ValuesSchema: values})
		}
	}
	return json.Marshal(entries)
}

// compactObject checks that s is one JSON object and compacts it.
func compactObject(s string) (json.RawMessage, error) {
	v, err := decodeOrdered([]byte(s))
	if err != nil {
		return nil, err
	}
	if _, ok := v.(*object); !ok {
		return nil, fmt.Errorf("not a JSON object")
	}
	return encodeOrdered(v)
}

// ValuesSchema returns the $defs/Values schema of a kind's schema document
// with every local $ref inlined: "#/…" JSON pointers, "#name" anchors and
// the same pointers behind the document's own $id. Keywords beside a $ref
// are kept and win over the referenced schema's. A reference that would
// recurse forever is cut to {} (any value). Property order is the
// document's, so a form drawn from it shows fields in the schema's order.
func ValuesSchema(doc string) (json.RawMessage, error) {
	root, err := decodeOrdered([]byte(doc))
	if err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	rootObj, ok := root.(*object)
	if !ok {
		return nil, fmt.Errorf("the schema is not a JSON object")
	}
	defs, _ := rootObj.get("$defs")
	defsObj, _ := defs.(*object)
	if defsObj == nil {
		return nil, fmt.Errorf("the schema has no $defs")
	}
	values, ok := defsObj.get("Values")
	if !ok {
		return nil, fmt.Errorf("the schema has no $defs/Values")
	}
	id, _ := rootObj.get("$id")
	idStr, _ := id.(string)
	in := &inliner{root: root, id: strings.TrimSuffix(idStr, "#")}
	out, err := in.inline(values, []string{"#/$defs/Values"})
	if err != nil {
		return nil, err
	}
	return encodeOrdered(out)
}

type inliner struct {
	root any
	id   string
}

// dataKeywords hold instances, not schemas: a "$ref" key inside them is
// data.
var dataKeywords = map[string]bool{"enum": true, "const": true, "default": true, "examples": true}

// nameKeywords map names to schemas: their keys are not keywords.
var nameKeywords = map[string]bool{"properties": true, "patternProperties": true, "dependentSchemas": true}

func (in *inliner) inline(node any, stack []string) (any, error) {
	switch n := node.(type) {
	case []any:
		out := make([]any, len(n))
		for i, v := range n {
			var err error
			if out[i], err = in.inline(v, stack); err != nil {
				return nil, err
			}
		}
		return out, nil
	case *object:
		out := &object{}
		if ref, ok := n.getString("$ref"); ok {
			if frag, local := in.local(ref); local {
				resolved, err := in.resolveRef(frag, stack)
				if err != nil {
					return nil, fmt.Errorf("$ref %q: %w", ref, err)
				}
				switch r := resolved.(type) {
				case *object:
					for _, k := range r.keys {
						if _, shadowed := n.get(k); !shadowed {
							out.set(k, r.vals[k])
						}
					}
				case bool:
					if !r {
						out.set("not", &object{})
					}
				}
				n = n.without("$ref")
			}
		}
		for _, k := range n.keys {
			v := n.vals[k]
			switch {
			case k == "$defs" || k == "definitions" || k == "$schema" || k == "$id" || k == "$anchor":
				continue // inlined: nothing refers to them any more
			case dataKeywords[k]:
				out.set(k, v)
			case nameKeywords[k]:
				// Keys are names ("default" may be a property), values schemas.
				names, ok := v.(*object)
				if !ok {
					out.set(k, v)
					continue
				}
				m := &object{}
				for _, name := range names.keys {
					iv, err := in.inline(names.vals[name], stack)
					if err != nil {
						return nil, err
					}
					m.set(name, iv)
				}
				out.set(k, m)
			default:
				iv, err := in.inline(v, stack)
				if err != nil {
					return nil, err
				}
				out.set(k, iv)
			}
		}
		return out, nil
	default:
		return node, nil
	}
}

// local reports whether ref points into this document, and its fragment.
func (in *inliner) local(ref string) (string, bool) {
	if strings.HasPrefix(ref, "#") {
		return ref[1:], true
	}
	if in.id != "" && strings.HasPrefix(ref, in.id+"#") {
		return ref[len(in.id)+1:], true
	}
	if in.id != "" && ref == in.id {
		return "", true
	}
	return "", false
}

func (in *inliner) resolveRef(frag string, stack []string) (any, error) {
	key := "#" + frag
	for _, s := range stack {
		if s == key {
			return &object{}, nil // recursive: cut
		}
	}
	var target any
	var err error
	if frag == "" || strings.HasPrefix(frag, "/") {
		target, err = pointer(in.root, frag)
	} else {
		target, err = anchor(in.root, frag)
	}
	if err != nil {
		return nil, err
	}
	return in.inline(target, append(stack[:len(stack):len(stack)], key))
}

// pointer follows a JSON pointer taken from a URI fragment.
func pointer(root any, frag string) (any, error) {
	if frag == "" {
		return root, nil
	}
	cur := root
	for _, tok := range strings.Split(frag[1:], "/") {
		if u, err := url.PathUnescape(tok); err == nil {
			tok = u
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case *object:
			v, ok := c.get(tok)
			if !ok {
				return nil, fmt.Errorf("no %q", tok)
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) || strconv.Itoa(i) != tok {
				return nil, fmt.Errorf("no index %q", tok)
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("cannot descend into %q", tok)
		}
	}
	return cur, nil
}

// anchor finds the schema whose $anchor is name.
func anchor(root any, name string) (any, error) {
	var found any
	var walk func(v any)
	walk = func(v any) {
		switch n := v.(type) {
		case *object:
			if a, ok := n.getString("$anchor"); ok && a == name && found == nil {
				found = n
			}
			for _, k := range n.keys {
				if !dataKeywords[k] {
					walk(n.vals[k])
				}
			}
		case []any:
			for _, e := range n {
				walk(e)
			}
		}
	}
	walk(root)
	if found == nil {
		return nil, fmt.Errorf("no $anchor %q", name)
	}
	return found, nil
}
