package agent

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/kindkit/kindkit/store"
)

// Metrics is told what the engine does, for an operator's counters. Its
// methods are called on the turn's hot path: they must be cheap, never
// block, and be safe for concurrent use. Nothing unbounded is handed to
// them: a tool name is one of the host's tools, a raise tool, or "unknown".
type Metrics interface {
	// TurnStarted: a person's message started a turn.
	TurnStarted()
	// TurnFinished: a turn ended with outcome OutcomeReply, OutcomeFailed
	// or OutcomeCancelled.
	TurnFinished(outcome string)
	// ModelCall: one model call returned, with its usage; failed when it
	// returned an error.
	ModelCall(usage store.Usage, failed bool)
	// ToolCall: one tool call ran (or parked); failed when its result is
	// an error.
	ToolCall(tool string, failed bool)
	// Parked: a turn parked.
	Parked()
	// ParkResolved: a park ended in state (resolved, expired, cancelled,
	// replaced), in this process.
	ParkResolved(state store.ParkState)
	// Resumed: a turn an answer resumed started running again, latency
	// after the answer reached the engine.
	Resumed(latency time.Duration)
}

// The outcomes of TurnFinished.
const (
	OutcomeReply     = "reply"
	OutcomeFailed    = "failed"
	OutcomeCancelled = "cancelled"
)

// unknownTool is the metric label of a call of a tool nobody offered.
const unknownTool = "unknown"

type nopMetrics struct{}

func (nopMetrics) TurnStarted()                 {}
func (nopMetrics) TurnFinished(string)          {}
func (nopMetrics) ModelCall(store.Usage, bool)  {}
func (nopMetrics) ToolCall(string, bool)        {}
func (nopMetrics) Parked()                      {}
func (nopMetrics) ParkResolved(store.ParkState) {}
func (nopMetrics) Resumed(time.Duration)        {}

// A NamedModel knows the model name it calls (gen_ai.request.model).
type NamedModel interface {
	ModelName() string
}

// tracerName is the instrumentation scope of the engine's spans.
const tracerName = "github.com/kindkit/kindkit/agent"

// The attributes kindkit adds beside the GenAI conventions'. None of them
// carries text a person or the model wrote.
const (
	attrRequestID   = attribute.Key("kindkit.request_id")
	attrResumed     = attribute.Key("kindkit.turn.resumed")
	attrOutcome     = attribute.Key("kindkit.turn.outcome")
	attrParkID      = attribute.Key("kindkit.park.id")
	attrParkType    = attribute.Key("kindkit.park.type")
	attrParkKind    = attribute.Key("kindkit.park.kind")
	attrParkOutcome = attribute.Key("kindkit.park.outcome")
	attrToolParked  = attribute.Key("kindkit.tool.parked")
)

var (
	invokeAgentAttr = semconv.GenAIOperationNameInvokeAgent
	chatAttr        = semconv.GenAIOperationNameChat
	executeToolAttr = semconv.GenAIOperationNameExecuteTool
)

// tracingOn tells whether tp makes spans anyone sees: false for the
// no-op provider, whose spans the engine then does not start at all.
func tracingOn(tp trace.TracerProvider) bool {
	_, off := tp.(noop.TracerProvider)
	return !off
}

// noSpan is the span of a turn when tracing is off: it records nothing,
// and its context is invalid, so nothing links to it.
var noSpan = trace.SpanFromContext(context.Background())

// traceParent is sc as a W3C traceparent, "" when sc is not valid (tracing
// is off).
func traceParent(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), carrier)
	return carrier.Get("traceparent")
}

// spanContextOf parses a W3C traceparent; invalid when s is not one.
func spanContextOf(s string) trace.SpanContext {
	if s == "" {
		return trace.SpanContext{}
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": s})
	return trace.SpanContextFromContext(ctx)
}

// startRun starts the span of one run of t: its first, or one an answer
// (or a take-over) resumed, which links to the span of the tool call that
// parked it, wherever that ran.
func (t *turn) startRun() {
	e := t.eng
	if !e.tracing {
		t.span = noSpan
		return
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(invokeAgentAttr, semconv.GenAIAgentName(e.cfg.AgentName), attrRequestID.String(t.requestID),
			attrResumed.Bool(t.after != ""))}
	if t.after != "" {
		if sc := spanContextOf(t.state.Trace); sc.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{attrParkID.String(t.after)}}))
		}
	}
	_, t.span = e.tracer.Start(context.Background(), e.runSpanName, opts...)
}

// endRun ends the span of t's run.
func (t *turn) endRun() {
	if t.cancelled.Load() {
		t.outcome = OutcomeCancelled
	}
	if !t.eng.tracing {
		return
	}
	if t.outcome != "" {
		t.span.SetAttributes(attrOutcome.String(t.outcome))
	}
	if t.outcome == OutcomeFailed {
		t.span.SetStatus(codes.Error, "turn failed")
	}
	t.span.End()
}

// spanCtx is the turn's context with its current span: the tool call's
// while one runs, else the run's.
func (t *turn) spanCtx() context.Context {
	if !t.eng.tracing {
		return t.ctx
	}
	if t.toolSpan != nil {
		return trace.ContextWithSpan(t.ctx, t.toolSpan)
	}
	return trace.ContextWithSpan(t.ctx, t.span)
}

// startModel starts the span of one model call.
func (t *turn) startModel() (context.Context, trace.Span) {
	e := t.eng
	if !e.tracing {
		return t.ctx, noSpan
	}
	attrs := []attribute.KeyValue{chatAttr}
	if e.modelName != "" {
		attrs = append(attrs, semconv.GenAIRequestModel(e.modelName))
	}
	return e.tracer.Start(t.spanCtx(), e.chatSpanName, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// endModel ends a model call's span with its usage; the error's text
// stays out of it (a model's error may quote the conversation).
func endModel(span trace.Span, usage store.Usage, err error) {
	if span == noSpan {
		return
	}
	span.SetAttributes(semconv.GenAIUsageInputTokens(usage.PromptTokens), semconv.GenAIUsageOutputTokens(usage.CompletionTokens))
	if err != nil {
		span.SetAttributes(semconv.ErrorTypeOther)
		span.SetStatus(codes.Error, "model call failed")
	}
	span.End()
}

// startTool starts the span of one tool call: its name and id, never its
// arguments or result.
func (t *turn) startTool(call store.ToolCall) {
	if !t.eng.tracing {
		t.toolSpan = noSpan
		return
	}
	_, t.toolSpan = t.eng.tracer.Start(trace.ContextWithSpan(t.ctx, t.span), "execute_tool "+call.Name,
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(executeToolAttr, semconv.GenAIToolName(call.Name), semconv.GenAIToolCallID(call.ID), semconv.GenAIToolType("function")))
}

// endTool ends the current tool call's span.
func (t *turn) endTool(parked, failed bool) {
	if !t.eng.tracing {
		t.toolSpan = nil
		return
	}
	if parked {
		t.toolSpan.SetAttributes(attrToolParked.Bool(true))
	}
	if failed {
		t.toolSpan.SetAttributes(semconv.ErrorTypeKey.String("tool_error"))
		t.toolSpan.SetStatus(codes.Error, "tool call failed")
	}
	t.toolSpan.End()
	t.toolSpan = nil
}

// parkEnded records that park p, of turn state s, ended in state, in this process: the
// park's wait span, from when it parked until now, as a child of the span
// of the tool call that parked it (so it sits in the trace of the turn
// that asked, whichever process raised it).
func (e *Engine) parkEnded(p *store.Park, s turnState, state store.ParkState) {
	e.metrics.ParkResolved(state)
	parent := spanContextOf(s.Trace)
	if !parent.IsValid() {
		return
	}
	attrs := []attribute.KeyValue{attrParkID.String(p.ID), attrParkType.String(string(p.Type)), attrParkOutcome.String(string(state))}
	if p.Kind != "" {
		attrs = append(attrs, attrParkKind.String(p.Kind))
	}
	_, span := e.tracer.Start(trace.ContextWithRemoteSpanContext(context.Background(), parent), "park_wait",
		trace.WithTimestamp(s.ParkedAt), trace.WithAttributes(attrs...))
	span.End()
}

// toolLabel is name as a metric label: a tool the turn may call, or
// unknownTool, so a model inventing names cannot grow the label set.
func (e *Engine) toolLabel(name string) string {
	if name == SubmitToolName {
		return name
	}
	if _, ok := e.cfg.Catalog.ByTool(name); ok {
		return name
	}
	if _, ok := e.hostTool(name); ok {
		return name
	}
	return unknownTool
}
