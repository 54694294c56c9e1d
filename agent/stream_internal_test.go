package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
)

// The stream knows its own notes by their first bytes, so a note's Origin
// must stay its first field.
func TestNoteStartsWithOrigin(t *testing.T) {
	s := quietEngine().stream
	data, err := json.Marshal(note{Origin: s.origin, Conversation: "c", Event: &wireEvent{Kind: EventText, Text: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, s.self) {
		t.Errorf("note %s does not start with %s", data, s.self)
	}
}

// FuzzNotes: whatever another process (or anything that can NOTIFY on the
// database) sends, the relay's receiver takes it without a panic, and a
// subscriber is told only events it can read.
func FuzzNotes(f *testing.F) {
	for _, s := range []string{
		`{"o":"x","c":"c1","e":{"k":0,"r":"T","t":"hi"}}`,
		`{"o":"x","c":"c1","e":{"k":4,"r":"T","y":{"MessageID":"m","Text":"done"}}}`,
		`{"o":"x","c":"c1","e":{"k":3,"r":"T","a":{"ID":"p1","Kind":"choices"}},"x":[{"k":1,"r":"T","l":{"id":"c","name":"n","arguments":"{}"}}]}`,
		`{"o":"x","c":"c1","e":{"k":4,"r":"T"}}`, `{"o":"x","c":"c1","e":{"k":3}}`, `{"o":"x","c":"c1","e":{"k":7}}`, `{"o":"x","c":"c1","e":{"k":99}}`,
		`{"o":"x","c":"c1","p":"p1"}`, `{"o":"x","c":"c1","d":true}`, `{"o":"x","c":"-","q":"probe"}`, `{}`, `null`, `[]`, `{"c":5}`, `{"o":"x","c":"c1","x":[1,2]}`,
	} {
		f.Add([]byte(s))
	}
	e := quietEngine()
	f.Fuzz(func(t *testing.T, data []byte) {
		stop := e.Subscribe(context.Background(), "c1", Position{}, func(ev Event) {
			switch {
			case ev.Kind == EventPrompt && ev.Park == nil, ev.Kind == EventReply && ev.Reply == nil, ev.Kind == EventMessage && ev.Message == nil:
				t.Errorf("told %+v, which has nothing to read", ev)
			}
		})
		defer stop()
		e.stream.receive(data)
	})
}

// A subscriber that joins mid-turn is told first what the turn said so
// far (a run of tokens as one text), then what comes; a turn that parked
// leaves nothing to catch up on.
func TestCatchUp(t *testing.T) {
	e := quietEngine()
	call := Event{Kind: EventToolCall, RequestID: "T", Call: store.ToolCall{ID: "c1", Name: "lookup", Arguments: `{"q":"x"}`}}
	e.stream.post("c1", call).run()
	e.stream.post("c1", Event{Kind: EventText, RequestID: "T", Text: "Hel"}).run()
	e.stream.post("c1", Event{Kind: EventText, RequestID: "T", Text: "lo"}).run()
	var late recorder
	defer e.Subscribe(context.Background(), "c1", Position{}, late.hear)()
	e.stream.post("c1", Event{Kind: EventText, RequestID: "T", Text: "!"}).run()
	want := []Event{{Kind: EventRunning, RequestID: "T"}, call, {Kind: EventText, RequestID: "T", Text: "Hello"}, {Kind: EventText, RequestID: "T", Text: "!"}}
	if diff := cmp.Diff(want, late.all(), cmpopts.IgnoreUnexported(Event{})); diff != "" {
		t.Errorf("late subscriber (-want +got):\n%s", diff)
	}

	e.stream.post("c1", Event{Kind: EventPrompt, RequestID: "T", Park: &store.Park{ID: "p1"}}, call).run()
	var after recorder
	defer e.Subscribe(context.Background(), "c1", Position{}, after.hear)()
	if got := after.all(); len(got) != 0 {
		t.Errorf("after the turn parked, the catch-up is %+v, want none", got)
	}
}

// A subscriber that joins a process that heard nothing of the turn in
// progress (it runs in another process, or its process died and it waits
// to be taken over) is told it from the store: that it runs, and its text
// up to its last stored step. What is told meanwhile comes after.
func TestCatchUpFromStore(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(mem.CreateConversation(ctx, &store.Conversation{ID: "c1"}, &store.Session{ID: "s1"}))
	record := &store.Park{ID: "t1", SessionID: "s1", Turn: turnState{RequestID: "T", Text: "Said so far."}.encode(), LeaseOwner: "gone"}
	if _, ok, err := mem.StartTurn(ctx, &store.Message{ID: "m1", ConversationID: "c1", Role: store.RoleUser, Text: "hi"}, record, nil, nil); err != nil || !ok {
		t.Fatalf("StartTurn = %v, %v", ok, err)
	}
	e := quietEngine()
	meanwhile := Event{Kind: EventText, RequestID: "T", Text: " And more."}
	e.cfg.Store = duringOwedTurn{mem, func() { e.stream.post("c1", meanwhile).run() }}
	var late recorder
	defer e.Subscribe(ctx, "c1", Position{}, late.hear)()
	want := []Event{{Kind: EventRunning, RequestID: "T"}, {Kind: EventText, RequestID: "T", Text: "Said so far."}, meanwhile}
	if diff := cmp.Diff(want, late.all(), cmpopts.IgnoreUnexported(Event{})); diff != "" {
		t.Errorf("subscriber (-want +got):\n%s", diff)
	}

	// Once it ended, nothing is in progress.
	must(mem.SaveStep(ctx, store.Lease{ParkID: "t1", Owner: "gone"}, store.Step{Done: true}))
	var after recorder
	defer quietEngineOn(mem).Subscribe(ctx, "c1", Position{}, after.hear)()
	if got := after.all(); len(got) != 0 {
		t.Errorf("after the turn ended, the catch-up is %+v, want none", got)
	}
}

// A conversation made here has no turn in progress: its first
// subscriber's catch-up reads nothing from the store. One made elsewhere
// is read.
func TestCatchUpOfNewConversation(t *testing.T) {
	ctx := context.Background()
	reads := &countOwedTurn{Store: memstore.New()}
	e := quietEngineOn(reads)
	conv, _, err := e.NewConversation(ctx, "", nil, Opening{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Subscribe(ctx, conv.ID, Position{}, func(Event) {})()
	if n := reads.n.Load(); n != 0 {
		t.Errorf("a new conversation's catch-up read the store %d times", n)
	}
	defer e.Subscribe(ctx, "made-elsewhere", Position{}, func(Event) {})()
	if n := reads.n.Load(); n != 1 {
		t.Errorf("the catch-up of a conversation made elsewhere read the store %d times, want once", n)
	}
}

type countOwedTurn struct {
	store.Store
	n atomic.Int32
}

func (s *countOwedTurn) OwedTurn(ctx context.Context, conv string) (*store.Park, error) {
	s.n.Add(1)
	return s.Store.OwedTurn(ctx, conv)
}

// duringOwedTurn is a store whose OwedTurn runs meanwhile as it reads.
type duringOwedTurn struct {
	store.Store
	meanwhile func()
}

func (s duringOwedTurn) OwedTurn(ctx context.Context, conv string) (*store.Park, error) {
	s.meanwhile()
	return s.Store.OwedTurn(ctx, conv)
}

func quietEngineOn(s store.Store) *Engine {
	e := quietEngine()
	e.cfg.Store = s
	return e
}

// What one engine tells goes to the subscribers of the other engines on
// the store through the relay, in order, the prompt with what it shows,
// without the engine's state of the turn; the engine's own notes are not
// told twice.
func TestRelay(t *testing.T) {
	bus := &loopBus{}
	here, there := quietEngine(bus).stream, quietEngine(bus).stream
	bus.streams = []*stream{here, there}
	var heard, own recorder
	defer there.eng.Subscribe(context.Background(), "c1", Position{}, heard.hear)()
	defer here.eng.Subscribe(context.Background(), "c1", Position{}, own.hear)()

	park := &store.Park{ID: "p1", Kind: "choices", Spec: json.RawMessage(`{"q":1}`), Turn: json.RawMessage(`{"v":1,"secret":"state"}`), LeaseOwner: "me"}
	call := Event{Kind: EventToolCall, RequestID: "T", Call: store.ToolCall{ID: "c1", Name: "raise", Arguments: `{}`}}
	told := []Event{
		{Kind: EventMessage, RequestID: "T", Message: &store.Message{ID: "m1", Text: "hi"}},
		{Kind: EventText, RequestID: "T", Text: "Let me ask."},
		{Kind: EventPrompt, RequestID: "T", Park: park},
		call,
	}
	here.post("c1", told[0]).run()
	here.post("c1", told[1]).run()
	here.post("c1", told[2], call).run()
	for range 3 { // the prompt and its call are one note
		bus.flush(t, here)
	}
	wantPark := *park
	wantPark.Turn, wantPark.LeaseOwner = nil, ""
	want := []Event{told[0], told[1], {Kind: EventPrompt, RequestID: "T", Park: &wantPark}, call}
	if diff := cmp.Diff(want, heard.all(), cmpopts.IgnoreUnexported(Event{})); diff != "" {
		t.Errorf("the other engine's subscriber (-want +got):\n%s", diff)
	}
	if got := len(own.all()); got != len(told) {
		t.Errorf("this engine's subscriber was told %d events, want %d, once each", got, len(told))
	}
}

type recorder struct {
	mu  sync.Mutex
	evs []Event
}

func (r *recorder) hear(ev Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, ev)
}

func (r *recorder) all() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.evs...)
}

// loopBus is a notifier whose notes every stream on it receives when the
// test flushes them.
type loopBus struct{ streams []*stream }

func (*loopBus) Notify(context.Context, ...[]byte) error              { return nil }
func (*loopBus) Listen(ctx context.Context, _ func(msg []byte)) error { <-ctx.Done(); return ctx.Err() }

// flush carries the oldest note from's queue to every stream.
func (b *loopBus) flush(t *testing.T, from *stream) {
	t.Helper()
	n := <-from.out
	data, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range b.streams {
		s.receive(data)
	}
}

// quietEngine is an engine that runs no loop, for the stream's tests, on
// bus (none: nil).
func quietEngine(bus ...store.Notifier) *Engine {
	e := &Engine{log: slog.New(slog.DiscardHandler), parked: map[string]*turn{}, clock: clockwork.NewRealClock()}
	e.cfg.Store = memstore.New()
	var b store.Notifier
	if len(bus) > 0 {
		b = bus[0]
	}
	e.stream = newStream(e, b)
	return e
}

// flush returns once the notes queued before it were handed to the bus:
// a run flushes what its turn told before it runs, so that a turn that
// starts elsewhere after this one ended hears this one begin.
func TestFlushWaitsForTheBus(t *testing.T) {
	bus := &slowBus{called: make(chan struct{}, 1), release: make(chan struct{})}
	s := quietEngine(bus).stream
	ctx, cancel := context.WithCancel(context.Background())
	var relay sync.WaitGroup
	relay.Go(func() { s.run(ctx) })
	defer func() {
		cancel()
		relay.Wait()
	}()
	s.post("c1", Event{Kind: EventMessage, RequestID: "T", Message: &store.Message{ID: "m1"}}).run()
	flushed := make(chan struct{})
	go func() {
		s.flush(context.Background())
		close(flushed)
	}()
	select {
	case <-flushed:
		t.Fatal("flush returned before the bus was handed the note")
	case <-bus.called:
	}
	close(bus.release)
	<-flushed
	if got := bus.notes.Load(); got != 1 {
		t.Errorf("the bus was handed %d notes when flush returned, want 1", got)
	}
}

// slowBus is a notifier whose Notify waits for release.
type slowBus struct {
	called  chan struct{}
	release chan struct{}
	notes   atomic.Int64
}

func (b *slowBus) Notify(ctx context.Context, msgs ...[]byte) error {
	select {
	case b.called <- struct{}{}:
	default:
	}
	select {
	case <-b.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	b.notes.Add(int64(len(msgs)))
	return nil
}

func (*slowBus) Listen(ctx context.Context, _ func(msg []byte)) error { <-ctx.Done(); return ctx.Err() }
