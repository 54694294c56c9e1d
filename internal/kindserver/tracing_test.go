package kindserver

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/kindkit/kindkit/internal/syncbuf"
	"github.com/kindkit/kindkit/internal/wstest"
)

// collector is a fake OTLP/HTTP trace receiver: it keeps the span names
// and service names of what it is sent.
type collector struct {
	mu       sync.Mutex
	spans    []string
	services []string
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req coltrace.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				c.services = append(c.services, kv.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.spans = append(c.spans, s.GetName())
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Write(out)
}

// With OTEL_EXPORTER_OTLP_ENDPOINT set, kindserver sends its spans there
// by OTLP/HTTP, and flushes them when it stops.
func TestOTLPExport(t *testing.T) {
	col := &collector{}
	hs := httptest.NewServer(col)
	defer hs.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", hs.URL)
	t.Setenv("OTEL_SERVICE_NAME", "")
	ctx, cancel := context.WithCancel(context.Background())
	out, errs := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	done := make(chan int)
	go func() { done <- Run(ctx, []string{"-store", "memory", "-addr", "127.0.0.1:0"}, out, errs) }()
	var base string
	for start := time.Now(); base == "" && time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
		if _, rest, ok := strings.Cut(out.String(), "(chat page: "); ok {
			base = strings.TrimSuffix(strings.TrimSpace(rest), ")")
		}
	}
	if base == "" {
		cancel()
		<-done
		t.Fatalf("kindserver did not start:\n%s", errs.String())
	}
	c := wstest.Dial(t, "ws"+strings.TrimPrefix(base, "http")+"ws")
	c.Send(`{"action":"create_conversation_session","requestId":"r","agentId":"a","supports":["choice_chips"]}`)
	sid := wstest.Path(c.Expect("immediate_response")[0], "data", "sessionId").(string)
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"hello"}`)
	c.Expect("immediate_response", "interaction_required")
	c.WS.CloseNow()
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d:\n%s", code, errs.String())
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	got := strings.Join(col.spans, ",")
	for _, want := range []string{"invoke_agent kindkit", "chat", "execute_tool request_choices"} {
		if !strings.Contains(got, want) {
			t.Errorf("the collector got spans %s, none named %q", got, want)
		}
	}
	if len(col.services) == 0 || col.services[0] != "kindserver" {
		t.Errorf("service names %v, want kindserver", col.services)
	}
	if !strings.Contains(errs.String(), "tracing=true") {
		t.Errorf("the serving line does not say tracing is on:\n%s", errs.String())
	}
}

// An exporter or protocol kindserver cannot serve stops it at the start,
// rather than spans sent nowhere (telemetry's TestTracingWanted has the
// rest of the rules).
func TestTracingEnv(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"zipkin": {"OTEL_TRACES_EXPORTER": "zipkin"},
		"grpc":   {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
	} {
		t.Run(name, func(t *testing.T) {
			for k, v := range env {
				t.Setenv(k, v)
			}
			var stdout, stderr bytes.Buffer
			if code := Run(context.Background(), []string{"-store", "memory", "-addr", "127.0.0.1:0"}, &stdout, &stderr); code != 2 {
				t.Errorf("exit %d, want 2; stderr:\n%s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), "OTEL_") {
				t.Errorf("stderr does not name the variable:\n%s", stderr.String())
			}
		})
	}
}
