package elicitation

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

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

// CheckSpec wants a requested schema that MCP allows (elicit's check, the
// one the forms kindkit sends pass) and that compiles.
func (Rules) CheckSpec(spec *elicitationgen.Spec) []kindkit.FieldError {
	if err := elicit.CheckRequestedSchema(map[string]any(spec.RequestedSchema)); err != nil {
		var errs []kindkit.FieldError
		for _, line := range strings.Split(err.Error(), "\n") {
			errs = append(errs, kindkit.FieldError{Field: "requestedSchema", Message: line})
		}
		return errs
	}
	if _, err := compile(spec.RequestedSchema); err != nil {
		return []kindkit.FieldError{{Field: "requestedSchema", Message: err.Error()}}
	}
	return nil
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
func (Rules) Validate(spec *elicitationgen.Spec, values *elicitationgen.Values) (*elicitationgen.Values, []kindkit.FieldError) {
	if spec == nil {
		return values, nil
	}
	s, err := compile(spec.RequestedSchema)
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

// Fallback tells the model to ask the server's question in words.
func (Rules) Fallback(spec *elicitationgen.Spec, reason string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "This channel cannot show the form the tool server %q asks for, so ask the visitor in conversation. Its message: %q. ", spec.Server, spec.Message)
	props, _ := spec.RequestedSchema["properties"].(map[string]any)
	required, _ := spec.RequestedSchema["required"].([]any)
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

// MCPSpec is the spec of the card that asks an MCP server's question: the
// server's name in kindkit's configuration, its message, and the schema of
// the answer it requested. It is the Spec of agent/mcp's CardKind for this
// kind.
func MCPSpec(server, message string, requestedSchema map[string]any) json.RawMessage {
	raw, _ := json.Marshal(elicitationgen.Spec{Server: server, Message: message, RequestedSchema: requestedSchema})
	return raw
}
