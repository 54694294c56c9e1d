// Package elicit lets a Go MCP server (github.com/modelcontextprotocol/go-sdk)
// ask a person through any kindkit kind by MCP elicitation
// (elicitation/create, form mode): Elicit checks the spec with the kind's
// rules, sends the kind's form for that spec, maps the accepted content back
// to the kind's Values, and validates it with the kind's schema and rules,
// asking again with the errors when it is wrong.
//
// The form comes from kindgen: gen/<kind>gen/elicitation.json (the
// Descriptor's ElicitationSchema) is MCP's flat requestedSchema as far as
// the schema alone decides it, with the parts that depend on the spec (a
// scale's bounds, the options of a question, one field per question) left as
// x-ui hints that NewForm fills in; or it says why the kind cannot be asked
// this way, and Elicit returns ErrNotElicitable. Generated code stays
// behaviour-free and imports only kindkit; this package is the behaviour.
//
// CheckRequestedSchema is MCP's rules for a requested schema, written once:
// every form NewForm draws passes it.
package elicit
