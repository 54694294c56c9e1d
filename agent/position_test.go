package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/storetest"
)

func TestParsePosition(t *testing.T) {
	for _, s := range []string{"1.0", "42.7", "9223372036854775807.4611686018427387904"} {
		p, err := agent.ParsePosition(s)
		if err != nil || p.String() != s {
			t.Errorf("ParsePosition(%q) = %q, %v", s, p, err)
		}
	}
	if p, err := agent.ParsePosition(""); err != nil || !p.IsZero() {
		t.Errorf(`ParsePosition("") = %q, %v; want none`, p, err)
	}
	for _, s := range []string{"0.0", "1", "1.", ".1", "01.0", "1.01", "+1.0", "-1.0", "1.-1", "1.0.0", "a.b", " 1.0",
		"1.4611686018427387905", "99999999999999999999.0"} {
		if _, err := agent.ParsePosition(s); !errors.Is(err, agent.ErrBadPosition) {
			t.Errorf("ParsePosition(%q) = %v, want ErrBadPosition", s, err)
		}
	}
}

// FuzzParsePosition: any string either is a position, which prints as
// itself, or is ErrBadPosition; never a panic.
func FuzzParsePosition(f *testing.F) {
	for _, s := range []string{"", "1.0", "12.345", "0.0", "1.01", "-1.2", "1.4611686018427387904"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := agent.ParsePosition(s)
		switch {
		case err != nil && !errors.Is(err, agent.ErrBadPosition):
			t.Fatalf("ParsePosition(%q): %v", s, err)
		case err == nil && p.String() != s:
			t.Fatalf("ParsePosition(%q) prints as %q", s, p)
		}
	})
}

// stepModel answers each call of a turn with its next step, the
// conversation's model position counting them; gate, when set, holds the
// last step's text after its first chunk until it is closed.
type stepModel struct {
	steps []step
	gate  chan struct{}
}

type step struct {
	chunks []string
	calls  []store.ToolCall
}

func (m *stepModel) Respond(ctx context.Context, req agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	i := req.Position
	if i >= len(m.steps) {
		return agent.ModelResponse{}, fmt.Errorf("no step %d", i)
	}
	s := m.steps[i]
	for j, c := range s.chunks {
		if j == 1 && i == len(m.steps)-1 && m.gate != nil {
			select {
			case <-m.gate:
			case <-ctx.Done():
				return agent.ModelResponse{}, ctx.Err()
			}
		}
		onText(c)
	}
	return agent.ModelResponse{Text: strings.Join(s.chunks, ""), ToolCalls: s.calls, Position: i + 1}, nil
}

// positionTurn: words and a card; after the answer, a call of a tool
// that does not exist; then the reply, in three chunks.
func positionTurn(gate chan struct{}) *stepModel {
	return &stepModel{gate: gate, steps: []step{
		{chunks: []string{"Let me ", "ask."}, calls: []store.ToolCall{{ID: "call-1", Name: "request_choices", Arguments: raise}}},
		{chunks: []string{"Checking."}, calls: []store.ToolCall{{ID: "call-2", Name: "lookup", Arguments: `{}`}}},
		{chunks: []string{"Pro ", "it ", "is."}},
	}}
}

// heard is what a subscriber was told, each run of text as one event.
type heard struct{ events []agent.Event }

func (h *heard) add(ev agent.Event) {
	if n := len(h.events); n > 0 && ev.Kind == agent.EventText && h.events[n-1].Kind == agent.EventText &&
		h.events[n-1].RequestID == ev.RequestID && h.events[n-1].After == ev.After && h.events[n-1].Pos.String() != "" {
		last := &h.events[n-1]
		last.Text += ev.Text
		last.Pos = ev.Pos
		return
	}
	h.events = append(h.events, ev)
}

// lines are h's events as a subscriber reads them, with their positions.
func (h *heard) lines() []string {
	var out []string
	for _, ev := range h.events {
		line := fmt.Sprintf("%s %s req=%s after=%s %q", ev.Pos, ev.Kind, ev.RequestID, ev.After, ev.Text)
		switch {
		case ev.Park != nil:
			line += " card=" + ev.Park.ID + " " + ev.Park.Kind
		case ev.Reply != nil:
			line += " reply=" + ev.Reply.MessageID + " " + ev.Reply.Text
		case ev.Message != nil:
			line += " message=" + ev.Message.ID + " " + ev.Message.Text
		case ev.Call.ID != "":
			line += " call=" + ev.Call.ID + " " + ev.Call.Name
		}
		out = append(out, line)
	}
	return out
}

// listen subscribes to conversation c1 on e from position from, and
// returns what it heard once it was told a reply.
func listen(t *testing.T, e *agent.Engine, from agent.Position) func() []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	events := make(chan agent.Event, 256)
	stop := e.Subscribe(ctx, "c1", from, func(ev agent.Event) { events <- ev })
	t.Cleanup(func() { stop(); cancel() })
	return func() []string {
		t.Helper()
		var h heard
		timeout := time.After(20 * time.Second)
		for {
			select {
			case ev := <-events:
				h.add(ev)
				if ev.Kind == agent.EventReply {
					return h.lines()
				}
			case <-timeout:
				t.Fatalf("from %q: no reply; heard %q", from, h.lines())
			}
		}
	}
}

// TestSubscribeFrom: a subscriber that passes the position of any event
// it saw is told every event after it, once and in order: the same, at
// the same positions, as a subscriber that never left. Mid-reply (the
// store has the turn up to its last tool result, this process the text
// since), and after the reply (all from the store), on every store; on
// PostgreSQL also through another process, which hears the text after the
// subscriber left through the relay.
func TestSubscribeFrom(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			var st, st2 store.Store
			var dsn string
			if name == "postgres" {
				dsn = storetest.PostgresDB(t)
				st, st2 = openStore(t, dsn), openStore(t, dsn)
			} else {
				st = open(t)
			}
			ctx := context.Background()
			gate := make(chan struct{})
			var closeGate sync.Once
			openGate := func() { closeGate.Do(func() { close(gate) }) }
			e := engine(t, st, positionTurn(gate), clockwork.NewFakeClock())
			t.Cleanup(openGate) // before the engine's shutdown waits for the turn
			var other, late *agent.Engine
			var relay *lateBus
			if st2 != nil {
				other = engine(t, st2, positionTurn(nil), clockwork.NewFakeClock())
				// A third process, whose relay is behind the store.
				lateStore := openStore(t, dsn)
				relay = &lateBus{Notifier: lateStore.(store.Shared).Notifier()}
				late = engine(t, sharedStore{Store: lateStore, bus: relay}, positionTurn(nil), clockwork.NewFakeClock())
				readyCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				for _, x := range []*agent.Engine{e, other, late} {
					if err := x.RelayReady(readyCtx); err != nil {
						t.Fatal(err)
					}
				}
			}
			sess := conversation(t, st, "", "choice_chips")
			events := make(chan agent.Event, 256)
			stop := e.Subscribe(ctx, "c1", agent.Position{}, func(ev agent.Event) { events <- ev })
			defer stop()
			if err := e.Send(ctx, sess, agent.Message{RequestID: "r1", Text: "hello"}, nil); err != nil {
				t.Fatal(err)
			}
			var seen []agent.Event // every event, as told
			until := func(done func(ev agent.Event) bool) {
				t.Helper()
				timeout := time.After(20 * time.Second)
				for {
					select {
					case ev := <-events:
						seen = append(seen, ev)
						if done(ev) {
							return
						}
					case <-timeout:
						var h heard
						for _, ev := range seen {
							h.add(ev)
						}
						t.Fatalf("waited in vain; saw:\n%s", strings.Join(h.lines(), "\n"))
					}
				}
			}
			until(func(ev agent.Event) bool { return ev.Kind == agent.EventPrompt })
			if relay != nil {
				relay.hold() // what the turn says from here on reaches late after its replay
			}
			if _, err := e.Submit(ctx, sess, seen[len(seen)-1].Park.ID, agent.Answer{Values: json.RawMessage(picked)}, nil); err != nil {
				t.Fatal(err)
			}
			until(func(ev agent.Event) bool { return ev.Kind == agent.EventText && ev.Text == "Pro " })

			// Mid-reply: from each event seen so far.
			var mid []func() []string
			for _, ev := range seen {
				if ev.Pos.IsZero() {
					t.Fatalf("%s event without a position", ev.Kind)
				}
				mid = append(mid, listen(t, e, ev.Pos))
			}
			var elsewhere, behind func() []string
			if other != nil {
				elsewhere = listen(t, other, seen[len(seen)-1].Pos)
				behind = listen(t, late, seen[len(seen)-1].Pos)
				relay.release() // late hears what its replay read already
			}
			openGate()
			until(func(ev agent.Event) bool { return ev.Kind == agent.EventReply })

			want := func(i int) []string {
				var h heard
				for _, ev := range seen[i+1:] {
					h.add(ev)
				}
				return h.lines()
			}
			check := func(what string, i int, got []string) {
				t.Helper()
				if w := want(i); strings.Join(got, "\n") != strings.Join(w, "\n") {
					t.Errorf("%s, from %s (event %d, %s):\n got %s\nwant %s", what, seen[i].Pos, i, seen[i].Kind,
						strings.Join(got, "\n     "), strings.Join(w, "\n     "))
				}
			}
			for i, heard := range mid {
				check("mid-reply", i, heard())
			}
			if elsewhere != nil {
				check("mid-reply, in another process", len(mid)-1, elsewhere())
				check("mid-reply, in a process whose relay was behind", len(mid)-1, behind())
			}
			// After the reply: every event but the last from the store.
			for i := range seen[:len(seen)-1] {
				check("after the reply", i, listen(t, e, seen[i].Pos)())
				if other != nil {
					check("after the reply, in another process", i, listen(t, other, seen[i].Pos)())
				}
			}
			if t.Failed() {
				var h heard
				for _, ev := range seen {
					h.add(ev)
				}
				t.Logf("the stream:\n%s", strings.Join(h.lines(), "\n"))
			}
		})
	}
}

// lateBus is a real relay (a PostgreSQL notifier) whose process hears
// late: it holds the notes its process hears between hold and release,
// as a relay behind the store does under load, then delivers them in
// order.
type lateBus struct {
	store.Notifier
	mu      sync.Mutex
	holding bool
	held    [][]byte
	deliver func([]byte)
}

func (b *lateBus) Listen(ctx context.Context, deliver func([]byte)) error {
	return b.Notifier.Listen(ctx, func(msg []byte) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.deliver = deliver
		if b.holding {
			b.held = append(b.held, slices.Clone(msg))
			return
		}
		deliver(msg)
	})
}

func (b *lateBus) hold() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.holding = true
}

func (b *lateBus) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, msg := range b.held {
		b.deliver(msg)
	}
	b.holding, b.held = false, nil
}
