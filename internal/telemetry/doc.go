// Package telemetry is what kindserver shows operators: Prometheus metrics
// (the engine's turns, model calls, tools and parks, the open sockets, and
// the latency of every store operation) on a registry it is handed, and
// OpenTelemetry traces exported by OTLP when the standard OTEL_*
// environment variables ask for them. The library packages take only
// interfaces (agent.Metrics, a trace.TracerProvider); this package is the
// wiring, and it mutates no global state.
package telemetry
