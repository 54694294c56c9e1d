package telemetry

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// TracingWanted tells whether the standard OTEL_* variables (read through
// getenv) ask for traces: OTEL_TRACES_EXPORTER=otlp, or, with
// OTEL_TRACES_EXPORTER unset, an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).
// OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn them off. An
// exporter other than otlp, or an OTLP protocol other than http/protobuf,
// is an error: kindserver would otherwise send nothing where the operator
// expects spans.
func TracingWanted(getenv func(string) string) (bool, error) {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false, nil
	}
	want := false
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return false, nil
	case "otlp":
		want = true
	case "":
		want = getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	default:
		return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: kindserver exports only otlp (or none)", exp)
	}
	if !want {
		return false, nil
	}
	proto := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if proto != "" && proto != "http/protobuf" {
		return false, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: kindserver speaks OTLP over http/protobuf only (port 4318)", proto)
	}
	return true, nil
}

// Tracing returns the tracer provider kindserver hands the engine and the
// function that flushes and stops it: when TracingWanted(getenv), an SDK provider
// batching spans to the OTLP/HTTP exporter (which reads its endpoint,
// headers, timeout and TLS from the OTEL_EXPORTER_OTLP_* variables; the
// sampler comes from OTEL_TRACES_SAMPLER, the resource from
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, service.name defaulting
// to kindserver; those are read from the process's environment); otherwise
// a no-op provider. The global provider is left alone.
func Tracing(ctx context.Context, getenv func(string) string) (trace.TracerProvider, func(context.Context) error, error) {
	want, err := TracingWanted(getenv)
	if err != nil || !want {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, err
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("otlp trace exporter: %w", err)
	}
	res, err := resource.Merge(resource.NewSchemaless(semconv.ServiceName("kindserver")), resource.Environment())
	if err != nil {
		return nil, nil, fmt.Errorf("trace resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}
