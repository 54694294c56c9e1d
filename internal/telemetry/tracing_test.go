package telemetry_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace/noop"

	"github.com/kindkit/kindkit/internal/telemetry"
)

// The standard variables decide: an OTLP endpoint or
// OTEL_TRACES_EXPORTER=otlp turns tracing on, none or OTEL_SDK_DISABLED
// off, nothing leaves it off; an exporter or protocol kindserver cannot
// serve is an error naming the variable.
func TestTracingWanted(t *testing.T) {
	for name, c := range map[string]struct {
		env  map[string]string
		want bool
		err  string
	}{
		"nothing":         {map[string]string{}, false, ""},
		"endpoint":        {map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true, ""},
		"traces endpoint": {map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true, ""},
		"otlp":            {map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, ""},
		"http/protobuf":   {map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, true, ""},
		"none":            {map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, false, ""},
		"sdk disabled":    {map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, false, ""},
		"zipkin":          {map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, "OTEL_TRACES_EXPORTER=zipkin"},
		"grpc":            {map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"},
		"traces grpc":     {map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, false, "grpc"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := telemetry.TracingWanted(func(k string) string { return c.env[k] })
			if got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
				t.Errorf("TracingWanted = %v, %v; want %v, an error saying %q", got, err, c.want, c.err)
			}
		})
	}
}

// Without the variables, Tracing hands out a no-op provider.
func TestTracingOff(t *testing.T) {
	tp, stop, err := telemetry.Tracing(context.Background(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tp.(noop.TracerProvider); !ok {
		t.Errorf("provider %T, want a no-op", tp)
	}
	if err := stop(context.Background()); err != nil {
		t.Error(err)
	}
}
