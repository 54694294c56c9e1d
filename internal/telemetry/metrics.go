package telemetry

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/store"
)

// Metrics are kindkit's Prometheus metrics, on the registry given to
// NewMetrics. It is an agent.Metrics; Store times a store's operations and
// WatchConnections counts a server's sockets. Every series the hot path
// touches is bound once: a call adds to a counter and allocates nothing.
type Metrics struct {
	reg prometheus.Registerer

	turnsStarted  prometheus.Counter
	turnsFinished map[string]prometheus.Counter // by outcome
	turnsOther    prometheus.Counter

	modelCalls   prometheus.Counter
	modelErrors  prometheus.Counter
	inputTokens  prometheus.Counter
	outputTokens prometheus.Counter

	toolCallsVec  *prometheus.CounterVec
	toolErrorsVec *prometheus.CounterVec
	toolsMu       sync.RWMutex
	tools         map[string]toolSeries // by tool name; bounded by the tools offered

	parks         prometheus.Counter
	parksPending  prometheus.Gauge
	parksResolved map[store.ParkState]prometheus.Counter

	resume prometheus.Observer

	storeOps *prometheus.HistogramVec

	webhookAttempts *prometheus.CounterVec // by endpoint label (scheme and host) and result
}

type toolSeries struct{ calls, errors prometheus.Counter }

var _ agent.Metrics = (*Metrics)(nil)

// NewMetrics registers kindkit's metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{reg: reg, tools: map[string]toolSeries{}}
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Namespace: "kindkit", Name: name, Help: help})
		f(c)
		return c
	}
	m.turnsStarted = counter("turns_started_total", "Turns a person's message started.")
	finished := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "kindkit", Name: "turns_finished_total",
		Help: "Turns that ended, by outcome: reply, failed or cancelled (other: an outcome none of those names)."}, []string{"outcome"})
	f(finished)
	m.turnsFinished = map[string]prometheus.Counter{}
	for _, o := range []string{agent.OutcomeReply, agent.OutcomeFailed, agent.OutcomeCancelled} {
		m.turnsFinished[o] = finished.WithLabelValues(o)
	}
	m.turnsOther = finished.WithLabelValues("other")

	m.modelCalls = counter("model_calls_total", "Model calls made.")
	m.modelErrors = counter("model_call_errors_total", "Model calls that returned an error.")
	tokens := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "kindkit", Name: "model_tokens_total",
		Help: "Tokens the model reported, by type: input (prompt) or output (completion)."}, []string{"type"})
	f(tokens)
	m.inputTokens, m.outputTokens = tokens.WithLabelValues("input"), tokens.WithLabelValues("output")

	m.toolCallsVec = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "kindkit", Name: "tool_calls_total",
		Help: "Tool calls run (or parked), by tool: a host tool, a raise tool, submit_interaction, or unknown."}, []string{"tool"})
	m.toolErrorsVec = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "kindkit", Name: "tool_errors_total",
		Help: "Tool calls whose result was an error, by tool."}, []string{"tool"})
	f(m.toolCallsVec)
	f(m.toolErrorsVec)

	m.parks = counter("parks_total", "Turns parked on a card or a confirmation.")
	m.parksPending = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "kindkit", Name: "parks_pending",
		Help: "Parks this process raised minus those it resolved: sum it over the processes sharing a store. A restart on a durable store starts it at 0 while its parks stay pending."})
	f(m.parksPending)
	resolved := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "kindkit", Name: "parks_resolved_total",
		Help: "Parks that ended, by outcome: resolved (answered), expired, cancelled or replaced."}, []string{"outcome"})
	f(resolved)
	m.parksResolved = map[store.ParkState]prometheus.Counter{}
	for _, s := range []store.ParkState{store.ParkResolved, store.ParkExpired, store.ParkCancelled, store.ParkReplaced} {
		m.parksResolved[s] = resolved.WithLabelValues(string(s))
	}

	resume := prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "kindkit", Name: "resume_latency_seconds",
		Help:    "From an answer (submit or confirmation) reaching the engine to its turn running again.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}})
	f(resume)
	m.resume = resume

	m.storeOps = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "kindkit", Name: "store_operation_duration_seconds",
		Help:    "Latency of store operations, by operation.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1}}, []string{"operation"})
	f(m.storeOps)

	m.webhookAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "kindkit", Name: "webhook_attempts_total",
		Help: "Webhook delivery attempts, by endpoint (scheme and host) and result: delivered, failed, gave_up (failed, too old to retry), disabled (410 Gone) or error (the store failed)."},
		[]string{"endpoint", "result"})
	f(m.webhookAttempts)
	return m
}

// WebhookAttempt counts an attempt; its labels are bounded by the
// endpoints configured.
func (m *Metrics) WebhookAttempt(endpoint, result string) {
	m.webhookAttempts.WithLabelValues(endpoint, result).Inc()
}

// WatchConnections registers the open-sockets gauge, read from open
// (server.Server.Connections) at every scrape.
func (m *Metrics) WatchConnections(open func() int) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "kindkit", Name: "connections_open",
		Help: "Open WebSocket connections."}, func() float64 { return float64(open()) }))
}

func (m *Metrics) TurnStarted() { m.turnsStarted.Inc() }

func (m *Metrics) TurnFinished(outcome string) {
	if c, ok := m.turnsFinished[outcome]; ok {
		c.Inc()
		return
	}
	m.turnsOther.Inc()
}

func (m *Metrics) ModelCall(u store.Usage, failed bool) {
	m.modelCalls.Inc()
	if failed {
		m.modelErrors.Inc()
	}
	m.inputTokens.Add(float64(u.PromptTokens))
	m.outputTokens.Add(float64(u.CompletionTokens))
}

func (m *Metrics) ToolCall(tool string, failed bool) {
	m.toolsMu.RLock()
	s, ok := m.tools[tool]
	m.toolsMu.RUnlock()
	if !ok {
		m.toolsMu.Lock()
		if s, ok = m.tools[tool]; !ok {
			s = toolSeries{m.toolCallsVec.WithLabelValues(tool), m.toolErrorsVec.WithLabelValues(tool)}
			m.tools[tool] = s
		}
		m.toolsMu.Unlock()
	}
	s.calls.Inc()
	if failed {
		s.errors.Inc()
	}
}

func (m *Metrics) Parked() {
	m.parks.Inc()
	m.parksPending.Inc()
}

func (m *Metrics) ParkResolved(state store.ParkState) {
	m.parksPending.Dec()
	if c, ok := m.parksResolved[state]; ok {
		c.Inc()
	}
}

func (m *Metrics) Resumed(latency time.Duration) { m.resume.Observe(latency.Seconds()) }
