package elicitation

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/elicit"
	"github.com/kindkit/kindkit/gen/elicitationgen"
)

// Rules checks the requested schema, validates answers against it and
// writes the conversational fallback.
type Rules struct {
	elicitationgen.Unimplemented
}

var _ elicitationgen.Rules = Rules{}

// isURL tells a URL-mode spec from a form-mode one (mode absent: form).
func isURL(spec *elicitationgen.Spec) bool {
	return spec.Mode != nil && *spec.Mode == elicitationgen.SpecModeURL
}

// CheckSpec wants, in form mode, a requested schema that MCP allows
// (elicit's check, the one the forms kindkit sends pass) and that
// compiles; in URL mode, a link the page may show (checkLink) and no
// schema.
func (Rules) CheckSpec(spec *elicitationgen.Spec) []kindkit.FieldError {
	if isURL(spec) {
		var errs []kindkit.FieldError
		if spec.RequestedSchema != nil {
			errs = append(errs, kindkit.FieldError{Field: "requestedSchema", Message: "a URL-mode elicitation has no requested schema"})
		}
		if spec.URL == nil {
			return append(errs, kindkit.FieldError{Field: "url", Message: "a URL-mode elicitation needs a url"})
		}
		if msg := checkLink(*spec.URL); msg != "" {
			errs = append(errs, kindkit.FieldError{Field: "url", Message: msg})
		}
		return errs
	}
	if spec.URL != nil || spec.ElicitationID != nil {
		field := "url"
		if spec.URL == nil {
			field = "elicitationId"
		}
		return []kindkit.FieldError{{Field: field, Message: `only a URL-mode elicitation (mode "url") has one`}}
	}
	if spec.RequestedSchema == nil {
		return []kindkit.FieldError{{Field: "requestedSchema", Message: "a form-mode elicitation needs a requested schema"}}
	}
	if err := elicit.CheckRequestedSchema(map[string]any(*spec.RequestedSchema)); err != nil {
		var errs []kindkit.FieldError
		for _, line := range strings.Split(err.Error(), "\n") {
			errs = append(errs, kindkit.FieldError{Field: "requestedSchema", Message: line})
		}
		return errs
	}
	if _, err := compile(*spec.RequestedSchema); err != nil {
		return []kindkit.FieldError{{Field: "requestedSchema", Message: err.Error()}}
	}
	return nil
}

// checkLink says what is wrong with a URL-mode link, or "". The page shows
// it as a link, so only an absolute http or https URL with a host will
// do: no javascript:, data: or file: link, nothing relative. A user part
// ("https://bank.example@evil.example/") is refused too, since it makes a
// link read as another domain's, and so are spaces and control
// characters, which a person cannot see.
func checkLink(raw string) string {
	if strings.ContainsFunc(raw, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return "must not hold spaces or control characters"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "is not a URL: " + err.Error()
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("must be an http or https link (got %q)", u.Scheme+":")
	case u.Hostname() == "":
		return "must name a host"
	case u.User != nil:
		return "must not carry a user name or password before the host"
	}
	return ""
}

// NormalizeValues reads null as an empty answer.
func (Rules) NormalizeValues(values any) any {
	if values == nil {
		return map[string]any{}
	}
	return values
}

// Validate checks the answer against the requested schema, formats
// included. Without the spec (a conversational submit in a later turn)
// there is nothing to check it against: the MCP client checks it again
// before it reaches the server.
//
// In URL mode the answer is only that the person is done: it carries no
// content, as MCP's accept of a URL elicitation carries none.
func (Rules) Validate(spec *elicitationgen.Spec, values *elicitationgen.Values) (*elicitationgen.Values, []kindkit.FieldError) {
	if spec == nil {
		return values, nil
	}
	if isURL(spec) {
		if len(*values) > 0 {
			return nil, []kindkit.FieldError{{Field: "values", Message: "a link's answer carries no values: what the person entered stays with the server they opened"}}
		}
		return values, nil
	}
	if spec.RequestedSchema == nil {
		return nil, []kindkit.FieldError{{Field: "values", Message: "the question has no requested schema to check the answer against"}}
	}
	s, err := compile(*spec.RequestedSchema)
	if err != nil {
		return nil, []kindkit.FieldError{{Field: "values", Message: "the question can no longer be checked: " + err.Error()}}
	}
	if err := s.Validate(map[string]any(*values)); err != nil {
		return nil, kindkit.SchemaFieldErrors(err)
	}
	return values, nil
}

// compile compiles a requested schema as draft 2020-12 with formats
// asserted, so an email that is not one is the person's error to fix, not
// the server's surprise. Each answer compiles it again: elicitations are
// rare, and the spec is the only copy.
func compile(requested elicitationgen.SpecRequestedSchema) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	const url = "kindkit:///elicitation/requested.json"
	if err := c.AddResource(url, map[string]any(requested)); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// Fallback tells the model to ask the server's question in words; in URL
// mode, to give the person the link and ask them to say when they are
// done.
func (Rules) Fallback(spec *elicitationgen.Spec, reason string) string {
	var b strings.Builder
	if isURL(spec) {
		link := *spec.URL
		host := link
		if u, err := url.Parse(link); err == nil {
			host = u.Hostname()
		}
		fmt.Fprintf(&b, "The tool server %q asks the visitor to open a link in their own browser and finish something there; what they enter stays between them and that site. "+
			"Its message: %q. Give the visitor the link exactly as it is, %s, and say that it leads to %s; do not open or fetch it yourself. "+
			`Ask them to tell you when they are done. Then call the submit_interaction tool with kind "elicitation" and values {}. `+
			"If they would rather not, or want to stop, call submit_interaction with declined=true.", spec.Server, spec.Message, link, host)
		return b.String()
	}
	fmt.Fprintf(&b, "This channel cannot show the form the tool server %q asks for, so ask the visitor in conversation. Its message: %q. ", spec.Server, spec.Message)
	var requested elicitationgen.SpecRequestedSchema
	if spec.RequestedSchema != nil {
		requested = *spec.RequestedSchema
	}
	props, _ := requested["properties"].(map[string]any)
	required, _ := requested["required"].([]any)
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	b.WriteString("Ask for: ")
	for i, name := range names {
		if i > 0 {
			b.WriteString("; ")
		}
		p, _ := props[name].(map[string]any)
		desc, _ := json.Marshal(p)
		fmt.Fprintf(&b, "%s %s", name, desc)
		if slices.Contains(required, any(name)) {
			b.WriteString(" (required)")
		}
	}
	b.WriteString(`. Then call the submit_interaction tool with kind "elicitation" and values {"<name>": <value>, …}; ` +
		`it checks them and tells you what to re-ask. If the visitor would rather not answer, call submit_interaction with declined=true.`)
	return b.String()
}

// MCPSpec is the spec of the card that asks an MCP server's question in
// form mode: the server's name in kindkit's configuration, its message, and
// the schema of the answer it requested. It is the Spec of agent/mcp's
// CardKind for this kind.
func MCPSpec(server, message string, requestedSchema map[string]any) json.RawMessage {
	rs := elicitationgen.SpecRequestedSchema(requestedSchema)
	raw, _ := json.Marshal(elicitationgen.Spec{Server: server, Message: message, RequestedSchema: &rs})
	return raw
}

// MCPURLSpec is the spec of the card that asks an MCP server's question in
// URL mode: the server's name, its message, the link, and the server's id
// of the elicitation ("" when it gave none, as from MCP 2026-07-28 on). It
// is the URLSpec of agent/mcp's CardKind for this kind.
func MCPURLSpec(server, message, link, elicitationID string) json.RawMessage {
	mode := elicitationgen.SpecModeURL
	spec := elicitationgen.Spec{Server: server, Message: message, Mode: &mode, URL: &link}
	if elicitationID != "" {
		spec.ElicitationID = &elicitationID
	}
	raw, _ := json.Marshal(spec)
	return raw
}
