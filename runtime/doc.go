// Package runtime is the kind-agnostic half of kindkit: a Kind built from a
// schema and its hand-written rules, the Catalog of kinds a server hosts, the
// two validation steps (raise arguments, submitted values) that turn JSON from
// outside into canonical JSON or per-field errors, and the canonical payload a
// parked turn resumes with.
//
// Generated code (gen/<kind>) declares types and hands them to NewKind; the
// server calls only the Kind interface. runtime imports no other package of
// kindkit.
package runtime
