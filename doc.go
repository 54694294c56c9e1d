// Package kindkit is the kind-agnostic core that generated code calls, as
// connect-go's root package is: a Kind built from a schema and its
// hand-written rules, the Catalog of kinds a server hosts, the two
// validation steps (raise arguments, submitted values) that turn JSON from
// outside into canonical JSON or per-field errors, and the canonical payload
// a parked turn resumes with.
//
// Generated code (gen/<kind>gen) declares types and hands them to NewKind; the
// engine and the server call only the Kind interface. kindkit imports no
// other package of the module.
package kindkit
