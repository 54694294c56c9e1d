package telemetry_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/internal/telemetry"
	"github.com/kindkit/kindkit/internal/wstest"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
	"github.com/kindkit/kindkit/webhook"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// scrape reads url's /metrics as a Prometheus scraper does.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("/metrics: %s", res.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// value is the sample of family name whose labels include labels (name,
// value pairs): a counter's or gauge's value, a histogram's count; -1 when
// there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.GetLabel() {
				found = found || (lp.GetName() == labels[i] && lp.GetValue() == labels[i+1])
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return -1
}

// TestMetricsAfterCycle runs one cycle on a real server (a message, a host
// tool, a call of a tool nobody offered, a card, its answer, the reply) and
// scrapes /metrics while the card waits and after the reply: the counters
// of each step moved.
func TestMetricsAfterCycle(t *testing.T) {
	m, err := agent.NewScripted([]agent.ScriptEntry{
		{Kind: "toolCall", Name: "lookup_order", Arguments: `{"order":"A-1"}`},
		{Kind: "toolCall", Name: "made_up_tool", Arguments: `{}`},
		{Kind: "toolCall", Name: "request_choices", Arguments: `{"questions":[{"question":"Which plan?","header":"Plan","options":["Basic","Pro"]}],"reason":"to quote"}`},
		{Kind: "text", Text: "Pro it is."},
	})
	if err != nil {
		t.Fatal(err)
	}
	lookup, err := agent.NewTool("lookup_order", "Looks an order up.", func(ctx context.Context, args struct {
		Order string `json:"order"`
	}) (any, error) {
		return nil, errors.New("the order system is down")
	})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	metrics := telemetry.NewMetrics(reg)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	s := servertest.Start(t, servertest.Config{Model: m, Store: metrics.Store(memstore.New()), Tools: []agent.HostTool{lookup}, Metrics: metrics}, mux)
	metrics.WatchConnections(s.Connections)

	c := wstest.Dial(t, s.WS())
	c.Send(`{"action":"create_conversation_session","requestId":"r-create","agentId":"a","supports":["choice_chips"]}`)
	sid, _ := wstest.Path(c.Expect("immediate_response")[0], "data", "sessionId").(string)
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"where is my order?"}`)
	ev := c.Next()
	for ; ev["type"] != "interaction_required"; ev = c.Next() {
	}
	iid, _ := wstest.Path(ev, "data", "data", "interactionId").(string)
	c.Expect("stream_chunk") // the raise's call, after its card

	waiting := scrape(t, s.URL)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"kindkit_turns_started_total", nil, 1},
		{"kindkit_parks_total", nil, 1},
		{"kindkit_parks_pending", nil, 1},
		{"kindkit_connections_open", nil, 1},
		{"kindkit_turns_finished_total", []string{"outcome", "reply"}, 0},
	} {
		if got := value(waiting, c.name, c.labels...); got != c.want {
			t.Errorf("while the card waits: %s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}

	c.Send(`{"action":"submit_interaction","requestId":"r-submit","sessionId":"` + sid + `","interactionId":"` + iid + `","kind":"choices","values":{"answers":[{"header":"Plan","options":["Pro"]}]}}`)
	c.Expect("immediate_response")
	if text, end := c.Turn(); end["type"] != "eventual_response" || text != "Pro it is." {
		t.Fatalf("the reply: %q, %v", text, end)
	}

	done := scrape(t, s.URL)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"kindkit_turns_started_total", nil, 1},
		{"kindkit_turns_finished_total", []string{"outcome", "reply"}, 1},
		{"kindkit_model_calls_total", nil, 4},
		{"kindkit_model_call_errors_total", nil, 0},
		{"kindkit_model_tokens_total", []string{"type", "input"}, 40},
		{"kindkit_model_tokens_total", []string{"type", "output"}, 20},
		{"kindkit_tool_calls_total", []string{"tool", "lookup_order"}, 1},
		{"kindkit_tool_errors_total", []string{"tool", "lookup_order"}, 1},
		{"kindkit_tool_calls_total", []string{"tool", "unknown"}, 1},
		{"kindkit_tool_errors_total", []string{"tool", "unknown"}, 1},
		{"kindkit_tool_calls_total", []string{"tool", "made_up_tool"}, -1},
		{"kindkit_tool_calls_total", []string{"tool", "request_choices"}, 1},
		{"kindkit_tool_errors_total", []string{"tool", "request_choices"}, 0},
		{"kindkit_parks_total", nil, 1},
		{"kindkit_parks_pending", nil, 0},
		{"kindkit_parks_resolved_total", []string{"outcome", "resolved"}, 1},
		{"kindkit_resume_latency_seconds", nil, 1},
		{"kindkit_connections_open", nil, 1},
		{"kindkit_store_operation_duration_seconds", []string{"operation", "save_park"}, 1},
		{"kindkit_store_operation_duration_seconds", []string{"operation", "take_park"}, 1},
		// A new conversation's first session is stored with it.
		{"kindkit_store_operation_duration_seconds", []string{"operation", "create_conversation"}, 1},
		{"kindkit_store_operation_duration_seconds", []string{"operation", "create_session"}, 0},
	} {
		if got := value(done, c.name, c.labels...); got != c.want {
			t.Errorf("after the reply: %s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got := value(done, "kindkit_store_operation_duration_seconds", "operation", "start_turn"); got < 1 {
		t.Errorf("after the reply: %v first messages timed, want some", got)
	}
}

// The engine's hot path pays a counter's add, never an allocation: every
// series is bound before it is used.
func TestMetricsDoNotAllocate(t *testing.T) {
	m := telemetry.NewMetrics(prometheus.NewRegistry())
	m.ToolCall("lookup_order", false) // binds the tool's series, once
	u := store.Usage{PromptTokens: 10, CompletionTokens: 5}
	if n := testing.AllocsPerRun(100, func() {
		m.TurnStarted()
		m.ModelCall(u, false)
		m.ToolCall("lookup_order", true)
		m.Parked()
		m.ParkResolved(store.ParkResolved)
		m.Resumed(time.Millisecond)
		m.TurnFinished(agent.OutcomeReply)
	}); n != 0 {
		t.Errorf("%v allocations per turn's worth of metrics, want 0", n)
	}
}

// Every webhook attempt is counted by endpoint and result, on /metrics.
func TestWebhookAttempts(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := telemetry.NewMetrics(reg)
	var _ webhook.Metrics = m
	m.WebhookAttempt("https://hooks.example.com", webhook.ResultFailed)
	m.WebhookAttempt("https://hooks.example.com", webhook.ResultFailed)
	m.WebhookAttempt("https://hooks.example.com", webhook.ResultDelivered)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	fams := scrape(t, srv.URL)
	for result, want := range map[string]float64{"failed": 2, "delivered": 1} {
		if got := value(fams, "kindkit_webhook_attempts_total", "endpoint", "https://hooks.example.com", "result", result); got != want {
			t.Errorf("kindkit_webhook_attempts_total{result=%q} = %v, want %v", result, got, want)
		}
	}
}
