package kindgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/kindkit/kindkit/internal/jsonx"
)

// SchemaError is a problem in one schema file, located by JSON pointer.
type SchemaError struct {
	Path    string // the schema file, relative to the project root
	Pointer string // where in the file, "/" for the document itself
	Message string
}

func (e *SchemaError) Error() string { return e.Path + ": " + e.Pointer + ": " + e.Message }

var (
	wireName = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	// toolName is what both OpenAI and Anthropic accept for a function name.
	toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	// addressee is a principal or group:NAME, without spaces or control
	// characters.
	addressee = regexp.MustCompile(`^(group:)?[^\s:\x00-\x1f][^\s\x00-\x1f]{0,255}$`)
)

// Schema is one kind's schema file, read and checked.
type Schema struct {
	Path            string         // relative to the project root, slash-separated
	Doc             map[string]any // the document as read
	Tree            *object        // the same document, keys in the authored order
	Indented        []byte         // the document, indented (gen/<kind>gen/schema.json)
	Name            string         // wire name
	Package         string         // the rules package, kinds/<Package>
	GenPackage      string         // the generated package, gen/<GenPackage>: Package + "gen"
	Capability      string
	ToolName        string
	ToolDescription string
	// Deadline is x-kind's deadline, when the kind sets one: how long its
	// cards wait (0: the engine's default), what expiry resolves them to,
	// and the default values as JSON.
	Deadline *Deadline
	// Addressee is x-kind's addressee, when the kind sets one: whom its
	// cards are addressed to (kindkit.Descriptor.Addressee).
	Addressee string
}

// Deadline is a kind's deadline policy, as x-kind says it.
type Deadline struct {
	After    time.Duration
	OnExpiry string
	Default  string // JSON; "" for none
}

// Load reads and checks one schema file.
func Load(path string, data []byte) (*Schema, error) {
	fail := func(ptr, format string, args ...any) (*Schema, error) {
		return nil, &SchemaError{Path: path, Pointer: ptr, Message: fmt.Sprintf(format, args...)}
	}
	var v any
	if err := jsonx.Decode(data, &v); err != nil {
		return fail("/", "not valid JSON: %s", jsonErrorText(data, err))
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return fail("/", "a schema file must hold a JSON object")
	}
	tree, err := jsonx.DecodeOrdered(data)
	if err != nil {
		return fail("/", "not valid JSON: %s", err)
	}
	s := &Schema{Path: path, Doc: doc, Tree: tree.(*object)}

	xk, ok := doc["x-kind"].(map[string]any)
	if !ok {
		return fail("/x-kind", "missing: every kind declares its metadata in an x-kind object")
	}
	for key := range xk {
		switch key {
		case "name", "capability", "tool", "description", "deadline", "addressee":
		default:
			return fail("/x-kind/"+escape(key), "unknown key (want name, capability, tool, description, deadline, addressee)")
		}
	}
	str := func(key string) (string, bool) {
		s, ok := xk[key].(string)
		return strings.TrimSpace(s), ok || xk[key] == nil
	}
	var good bool
	if s.Name, good = str("name"); !good || !wireName.MatchString(s.Name) {
		return fail("/x-kind/name", "must be a lower_snake_case wire name such as \"choices\"")
	}
	s.Package = strings.ReplaceAll(s.Name, "_", "")
	s.GenPackage = s.Package + "gen"
	if s.Capability, good = str("capability"); !good || s.Capability == "" {
		return fail("/x-kind/capability", "must be a non-empty string, the capability a client declares in supports")
	}
	// "tool": false is a kind only host code asks (an MCP server's
	// elicitation): the model is offered no raise tool for it.
	if xk["tool"] == false {
		s.ToolName = ""
	} else if s.ToolName, good = str("tool"); !good {
		return fail("/x-kind/tool", "must be a string, or false for a kind the model does not raise")
	} else if s.ToolName == "" {
		s.ToolName = "request_" + s.Name
	}
	if s.ToolName != "" && !toolName.MatchString(s.ToolName) {
		return fail("/x-kind/tool", "tool name %q is rejected by model APIs: use 1 to 64 letters, digits, _ or -", s.ToolName)
	}
	if s.ToolName == "submit_interaction" {
		return fail("/x-kind/tool", "submit_interaction is the server's own tool")
	}
	if s.ToolDescription, good = str("description"); !good || s.ToolDescription == "" {
		return fail("/x-kind/description", "must be a non-empty string: the raise tool's description the model reads")
	}

	if s.Addressee, good = str("addressee"); !good || (xk["addressee"] != nil && !addressee.MatchString(s.Addressee)) {
		return fail("/x-kind/addressee", "must be a principal (a token's sub, e.g. \"legal-desk\") or group:NAME")
	}

	if raw, ok := xk["deadline"]; ok {
		d, ptr, msg := loadDeadline(raw)
		if msg != "" {
			return fail("/x-kind/deadline"+ptr, "%s", msg)
		}
		s.Deadline = d
	}

	defs, ok := doc["$defs"].(map[string]any)
	if !ok {
		return fail("/$defs", "missing: a kind declares $defs Spec and Values")
	}
	for _, name := range []string{"Spec", "Values"} {
		if _, ok := defs[name].(map[string]any); !ok {
			return fail("/$defs/"+name, "missing: a kind declares $defs Spec and Values")
		}
	}
	if err := checkRefs(doc, "", doc); err != nil {
		return fail(err.ptr, "%s", err.msg)
	}
	spec := resolve(doc, defs["Spec"].(map[string]any))
	props, ok := spec["properties"].(map[string]any)
	if spec["type"] != "object" || !ok {
		return fail("/$defs/Spec", "must be an object schema with properties: they become the raise tool's parameters")
	}
	if _, ok := props["reason"]; ok {
		return fail("/$defs/Spec/properties/reason", "reason is added to the raise tool by kindkit; remove it from Spec")
	}
	if err := compile(path, doc); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, bytes.TrimSpace(data), "", "  "); err != nil {
		return fail("/", "%s", err)
	}
	s.Indented = append(buf.Bytes(), '\n')
	return s, nil
}

type refError struct{ ptr, msg string }

// checkRefs makes sure every $ref is local and resolves.
func checkRefs(doc map[string]any, ptr string, v any) *refError {
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"]; ok {
			s, isString := ref.(string)
			if !isString {
				return &refError{ptr + "/$ref", "must be a string"}
			}
			if _, ok := lookup(doc, s); !ok {
				return &refError{ptr + "/$ref", fmt.Sprintf("%q does not resolve: only local references (#/$defs/...) to existing schemas are supported", s)}
			}
		}
		for _, k := range sortedKeys(v) {
			if k == "x-kind" || k == "enum" || k == "const" || k == "default" || k == "examples" {
				continue
			}
			if err := checkRefs(doc, ptr+"/"+escape(k), v[k]); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range v {
			if err := checkRefs(doc, ptr+"/"+strconv.Itoa(i), e); err != nil {
				return err
			}
		}
	}
	return nil
}

// lookup resolves a local reference such as #/$defs/Spec.
func lookup(doc map[string]any, ref string) (map[string]any, bool) {
	ptr, ok := strings.CutPrefix(ref, "#")
	if !ok || (ptr != "" && !strings.HasPrefix(ptr, "/")) {
		return nil, false
	}
	v, ok := jsonx.Pointer(doc, ptr)
	if !ok {
		return nil, false
	}
	m, ok := v.(map[string]any)
	return m, ok
}

// resolve follows $ref chains (already checked) to the schema they name.
func resolve(doc, s map[string]any) map[string]any {
	for range 32 {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		next, ok := lookup(doc, ref)
		if !ok {
			return s
		}
		s = next
	}
	return s
}

// compile checks the document against the JSON Schema metaschema by
// compiling the two definitions a kind needs.
func compile(path string, doc map[string]any) error {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "kindkit:///" + path
	if err := c.AddResource(url, doc); err != nil {
		return &SchemaError{Path: path, Pointer: "/", Message: err.Error()}
	}
	for _, def := range []string{"Spec", "Values"} {
		_, err := c.Compile(url + "#/$defs/" + def)
		if err == nil {
			continue
		}
		var sve *jsonschema.SchemaValidationError
		if errors.As(err, &sve) {
			var ve *jsonschema.ValidationError
			if errors.As(sve.Err, &ve) {
				for len(ve.Causes) > 0 {
					ve = ve.Causes[0]
				}
				ptr := "/" + strings.Join(escapeAll(ve.InstanceLocation), "/")
				return &SchemaError{Path: path, Pointer: ptr, Message: "not a valid JSON Schema: " + ve.ErrorKind.LocalizedString(message.NewPrinter(language.English))}
			}
		}
		return &SchemaError{Path: path, Pointer: "/$defs/" + def, Message: err.Error()}
	}
	return nil
}

func jsonErrorText(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
		return fmt.Sprintf("%s (line %d)", se.Error(), line)
	}
	return err.Error()
}

func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

func escapeAll(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = escape(t)
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// loadDeadline reads x-kind's deadline: {"after": a Go duration such as
// "48h", "onExpiry": "no_response", "default" or "end_turn", "default":
// the values, with onExpiry "default" only}. On a problem it returns the
// pointer below /x-kind/deadline and the message.
func loadDeadline(raw any) (*Deadline, string, string) {
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, "", "must be an object: {after, onExpiry, default}"
	}
	d := &Deadline{}
	for key, v := range obj {
		switch key {
		case "after":
			text, ok := v.(string)
			after, err := time.ParseDuration(text)
			if !ok || err != nil || after <= 0 {
				return nil, "/after", "must be a positive Go duration, such as \"48h\" or \"15m\""
			}
			d.After = after
		case "onExpiry":
			text, _ := v.(string)
			switch text {
			case "no_response", "default", "end_turn":
				d.OnExpiry = text
			default:
				return nil, "/onExpiry", "must be \"no_response\", \"default\" or \"end_turn\""
			}
		case "default":
			b, err := json.Marshal(v)
			if err != nil {
				return nil, "/default", "cannot be written as JSON"
			}
			d.Default = string(b)
		default:
			return nil, "/" + escape(key), "unknown key (want after, onExpiry, default)"
		}
	}
	if (d.OnExpiry == "default") != (d.Default != "") {
		return nil, "", "default values go with onExpiry \"default\", and it needs them"
	}
	return d, "", ""
}
