package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/store"
)

// What the person and the model wrote in TestTraceParkResume; none of it
// may reach a span.
const (
	secretMessage  = "MSG-SECRET-4417 my order is late"
	secretArg      = "ARG-SECRET-7731"
	secretQuestion = "QUESTION-SECRET-5512"
	secretResult   = "RESULT-SECRET-9038"
	secretReply    = "REPLY-SECRET-2264"
)

// tracer is an SDK tracer provider recording into memory; it is shut down
// when the test ends.
func tracer(t *testing.T) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	return tp, exp
}

// spansNamed waits until exp holds at least n spans named name, and
// returns them.
func spansNamed(t *testing.T, exp *tracetest.InMemoryExporter, name string, n int) tracetest.SpanStubs {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var out tracetest.SpanStubs
		for _, s := range exp.GetSpans() {
			if s.Name == name {
				out = append(out, s)
			}
		}
		if len(out) >= n || time.Now().After(deadline) {
			if len(out) != n {
				t.Fatalf("%d spans named %q, want %d (all: %v)", len(out), name, n, names(exp.GetSpans()))
			}
			return out
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// attr is the value of span s's attribute key, as text; "" when absent.
func attr(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// TestTraceParkResume parks a turn on one server process (a host tool
// call, then a raise) and resumes it on another that shares the store: the
// first process's spans are the turn's run, its model calls and its tool
// calls; the second's are the park's wait, a child of the raise's span,
// and the resumed run, linked to it. No span carries what anyone wrote.
// On every store: the link travels in the park's stored turn state.
func TestTraceParkResume(t *testing.T) {
	for _, ns := range scenarioStores(t) {
		t.Run(ns.name, func(t *testing.T) { traceParkResume(t, ns.open(t)) })
	}
}

func traceParkResume(t *testing.T, st store.Store) {
	script := []agent.ScriptEntry{
		{Kind: "toolCall", Name: "lookup_order", Arguments: `{"order":"` + secretArg + `"}`},
		{Kind: "toolCall", Name: "request_choices", Arguments: `{"questions":[{"question":"` + secretQuestion + `?","header":"Plan","options":["Basic","Pro"]}],"reason":"to quote"}`},
		{Kind: "text", Text: secretReply},
	}
	lookup, err := agent.NewTool("lookup_order", "Looks an order up.", func(ctx context.Context, args struct {
		Order string `json:"order"`
	}) (any, error) {
		return secretResult + " for " + args.Order, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tpA, expA := tracer(t)
	tpB, expB := tracer(t)
	config := func(tp trace.TracerProvider) servertest.Config {
		m, err := agent.NewScripted(script)
		if err != nil {
			t.Fatal(err)
		}
		return servertest.Config{Model: m, Store: st, Tools: []agent.HostTool{lookup}, KeepParksOnDrain: true, TracerProvider: tp}
	}

	// Process A: the message, the tool call, the card.
	a := servertest.Start(t, config(tpA), nil)
	c := dial(t, a.WS())
	c.Send(`{"action":"create_conversation_session","requestId":"r-create","agentId":"a","supports":["choice_chips"]}`)
	ack := c.Expect("immediate_response")[0]
	convID, sid := path(ack, "data", "conversationId").(string), path(ack, "data", "sessionId").(string)
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"` + secretMessage + `"}`)
	for ev := c.Next(); ev["type"] != "interaction_required"; ev = c.Next() {
	}
	c.WS.CloseNow()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a.Shutdown(ctx)

	// Process B: the same conversation, the same card, the answer.
	b := servertest.Start(t, config(tpB), nil)
	c = dial(t, b.WS())
	sidB := resumeConversation(c, convID, "")
	iid := path(c.Expect("interaction_required")[0], "data", "data", "interactionId").(string)
	submitPlan(c, sidB, iid)
	c.Expect("immediate_response")
	if _, text := expectResumed(c); text != secretReply {
		t.Fatalf("resumed turn said %q", text)
	}

	const run = "invoke_agent kindkit"
	runA := spansNamed(t, expA, run, 1)[0]
	chatsA := spansNamed(t, expA, "chat", 2)
	toolA := spansNamed(t, expA, "execute_tool lookup_order", 1)[0]
	raise := spansNamed(t, expA, "execute_tool request_choices", 1)[0]
	runB := spansNamed(t, expB, run, 1)[0]
	chatB := spansNamed(t, expB, "chat", 1)[0]
	wait := spansNamed(t, expB, "park_wait", 1)[0]

	for _, c := range []struct {
		span     tracetest.SpanStub
		key, val string
	}{
		{runA, "gen_ai.operation.name", "invoke_agent"},
		{runA, "kindkit.turn.resumed", "false"},
		{runA, "kindkit.turn.outcome", "parked"},
		{runA, "kindkit.request_id", "T"},
		{runB, "gen_ai.operation.name", "invoke_agent"},
		{runB, "kindkit.turn.resumed", "true"},
		{runB, "kindkit.turn.outcome", "reply"},
		{chatsA[0], "gen_ai.operation.name", "chat"},
		{chatsA[0], "gen_ai.usage.input_tokens", "10"},
		{chatsA[0], "gen_ai.usage.output_tokens", "5"},
		{chatsA[1], "gen_ai.usage.input_tokens", "10"},
		{chatB, "gen_ai.operation.name", "chat"},
		{chatB, "gen_ai.usage.output_tokens", "5"},
		{toolA, "gen_ai.operation.name", "execute_tool"},
		{toolA, "gen_ai.tool.name", "lookup_order"},
		{toolA, "kindkit.tool.parked", ""},
		{raise, "gen_ai.operation.name", "execute_tool"},
		{raise, "gen_ai.tool.name", "request_choices"},
		{raise, "kindkit.tool.parked", "true"},
		{wait, "kindkit.park.id", iid},
		{wait, "kindkit.park.kind", "choices"},
		{wait, "kindkit.park.outcome", "resolved"},
	} {
		if got := attr(c.span, c.key); got != c.val {
			t.Errorf("%s: %s = %q, want %q", c.span.Name, c.key, got, c.val)
		}
	}
	for _, s := range append(append(tracetest.SpanStubs{}, chatsA...), toolA, raise) {
		if s.Parent.SpanID() != runA.SpanContext.SpanID() {
			t.Errorf("%s is not a child of the first run", s.Name)
		}
	}
	if chatB.Parent.SpanID() != runB.SpanContext.SpanID() {
		t.Errorf("the resumed model call is not a child of the resumed run")
	}
	// The wait hangs under the raise that parked, in the first process's
	// trace, from the park until the answer, before the resumed run.
	if !wait.Parent.Equal(raise.SpanContext.WithRemote(true)) {
		t.Errorf("park_wait's parent is %v, want the raise's span %v", wait.Parent, raise.SpanContext)
	}
	if wait.StartTime.Before(raise.StartTime) || wait.EndTime.Before(raise.EndTime) || wait.EndTime.After(runB.StartTime) {
		t.Errorf("park_wait runs %v–%v; the raise %v–%v, the resumed run from %v", wait.StartTime, wait.EndTime, raise.StartTime, raise.EndTime, runB.StartTime)
	}
	// The resumed run, on the other process, links to the raise.
	linked := false
	for _, l := range runB.Links {
		linked = linked || (l.SpanContext.TraceID() == raise.SpanContext.TraceID() && l.SpanContext.SpanID() == raise.SpanContext.SpanID())
	}
	if !linked {
		t.Errorf("the resumed run links to %v, want the raise's span %v", runB.Links, raise.SpanContext)
	}

	for _, s := range append(expA.GetSpans(), expB.GetSpans()...) {
		var text []string
		text = append(text, s.Name, s.Status.Description)
		for _, kv := range s.Attributes {
			text = append(text, kv.Value.Emit())
		}
		for _, ev := range s.Events {
			text = append(text, ev.Name)
			for _, kv := range ev.Attributes {
				text = append(text, kv.Value.Emit())
			}
		}
		for _, l := range s.Links {
			for _, kv := range l.Attributes {
				text = append(text, kv.Value.Emit())
			}
		}
		all := strings.Join(text, "\n")
		for _, secret := range []string{"MSG-SECRET", secretArg, secretQuestion, secretResult, secretReply} {
			if strings.Contains(all, secret) {
				t.Errorf("span %s carries %q", s.Name, secret)
			}
		}
	}
}
