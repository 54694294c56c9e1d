package agent_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"go.uber.org/goleak"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
	"github.com/kindkit/kindkit/store/sqlstore"
	"github.com/kindkit/kindkit/store/storetest"
)

// These tests drive the engine with no WebSocket at all: a subscriber that
// records what the engine tells it, real stores, and a fake clock, so no
// test waits out a deadline or a lease in real time.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// follower subscribes to a conversation and records its events, as a
// client does.
type follower struct {
	events chan agent.Event
}

func newFollower() *follower { return &follower{events: make(chan agent.Event, 256)} }

// start subscribes f to sess's conversation and sends text on it.
func (f *follower) start(e *agent.Engine, sess *store.Session, text string) {
	e.Subscribe(context.Background(), sess.ConversationID, agent.Position{}, func(ev agent.Event) { f.events <- ev })
	if err := e.Send(context.Background(), sess, agent.Message{RequestID: "r1", Text: text}, nil); err != nil {
		panic(err)
	}
}

// next returns the next event of the given kind, failing on a terminal
// event of another kind.
func (f *follower) next(t *testing.T, kind agent.EventKind) agent.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-f.events:
			if ev.Kind == kind {
				return ev
			}
			if ev.Kind == agent.EventReply || ev.Kind == agent.EventFailed {
				t.Fatalf("got terminal event %v, want %v", ev.Kind, kind)
			}
		case <-timeout:
			t.Fatalf("no event %v", kind)
		}
	}
}

const raise = `{"questions":[{"question":"Which plan?","header":"Plan","options":["Basic","Pro"]}],"reason":"to quote"}`

// script is a model that raises a choices card, then replies.
func script(t *testing.T, reply string) agent.Model {
	return scripted(t, agent.ScriptEntry{Kind: "toolCall", Name: "request_choices", Arguments: raise}, agent.ScriptEntry{Kind: "text", Text: reply})
}

func scripted(t *testing.T, entries ...agent.ScriptEntry) agent.Model {
	t.Helper()
	m, err := agent.NewScripted(entries)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func stores(t *testing.T) map[string]func(t *testing.T) store.Store {
	return map[string]func(t *testing.T) store.Store{
		"memory":   func(t *testing.T) store.Store { return memstore.New() },
		"sqlite":   func(t *testing.T) store.Store { return openStore(t, "sqlite:"+filepath.Join(t.TempDir(), "k.db")) },
		"postgres": func(t *testing.T) store.Store { return openStore(t, storetest.PostgresDB(t)) },
	}
}

// openStore opens the store dsn names until the test ends.
func openStore(t *testing.T, dsn string) store.Store {
	t.Helper()
	s, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newEngine runs an engine on cfg, with every kind, until the test ends;
// ParkTimeout defaults to an hour and LeaseTimeout to 3s.
func newEngine(t *testing.T, cfg agent.Config) *agent.Engine {
	t.Helper()
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Catalog = catalog
	if cfg.ParkTimeout == 0 {
		cfg.ParkTimeout = time.Hour
	}
	if cfg.LeaseTimeout == 0 {
		cfg.LeaseTimeout = 3 * time.Second
	}
	e, err := agent.NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Shutdown(context.Background()) })
	return e
}

func engine(t *testing.T, st store.Store, m agent.Model, clock clockwork.Clock) *agent.Engine {
	return newEngine(t, agent.Config{Store: st, Model: m, Clock: clock})
}

// conversation makes conversation c1 of owner, with the capabilities
// supports, and its session s1.
func conversation(t *testing.T, st store.Store, owner string, supports ...string) *store.Session {
	t.Helper()
	ctx := context.Background()
	conv := &store.Conversation{ID: "c1", Owner: owner, Supports: supports, CreatedAt: time.Now()}
	if err := st.CreateConversation(ctx, conv); err != nil {
		t.Fatal(err)
	}
	sess := &store.Session{ID: "s1", ConversationID: "c1"}
	if err := st.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	return sess
}

// history is conversation c1's roles, oldest first.
func history(t *testing.T, st store.Store) []store.Role { return roles(t, st, "c1") }

// roles is conversation conv's history, oldest first.
func roles(t *testing.T, st store.Store, conv string) []store.Role {
	t.Helper()
	msgs, _, err := st.Messages(context.Background(), conv, nil, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []store.Role
	for _, m := range slices.Backward(msgs) {
		out = append(out, m.Role)
	}
	return out
}

// parkOne starts a turn of conversation c1 with message on e, which
// raises a card, and returns its session, its follower and the park.
func parkOne(t *testing.T, e *agent.Engine, st store.Store, message string) (*store.Session, *follower, *store.Park) {
	t.Helper()
	sess := conversation(t, st, "", "choice_chips")
	f := newFollower()
	f.start(e, sess, message)
	f.next(t, agent.EventPrompt)
	p, err := st.PendingPark(context.Background(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	return sess, f, p
}

// noOwedTurns checks that the store owes no turn a reply, even an hour
// after now.
func noOwedTurns(t *testing.T, st store.Store, now time.Time, when string) {
	t.Helper()
	if owed, err := st.OwedTurns(context.Background(), now.Add(time.Hour), 10); err != nil || len(owed) != 0 {
		t.Errorf("owed turns %s = %d, %v; want none", when, len(owed), err)
	}
}

var wantHistory = []store.Role{store.RoleUser, store.RoleAssistant, store.RoleTool, store.RoleAssistant, store.RoleReply}

const picked = `{"answers":[{"header":"Plan","options":["Pro"]}]}`

// TestEngineParkSubmitReply: a turn parks, the answer is taken and the
// turn resumes to its reply, on every store.
func TestEngineParkSubmitReply(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			e := engine(t, st, script(t, "Pro it is."), clockwork.NewFakeClock())
			sess := conversation(t, st, "", "choice_chips")
			f := newFollower()
			f.start(e, sess, "hello")
			prompt := f.next(t, agent.EventPrompt)
			if prompt.Park.Kind != "choices" || prompt.RequestID != "r1" {
				t.Fatalf("prompt = %+v", prompt.Park)
			}
			p, err := st.PendingPark(context.Background(), "c1")
			if err != nil {
				t.Fatal(err)
			}
			acked := false
			ok, err := e.Submit(context.Background(), sess, p.ID, agent.Answer{Values: []byte(picked)}, func(agent.Taken) { acked = true })
			if err != nil || !ok || !acked {
				t.Fatalf("Submit = %v, %v (acked %v)", ok, err, acked)
			}
			if r := f.next(t, agent.EventToolResult); r.Call.Name != "request_choices" {
				t.Errorf("first resumed event = %+v, want the raise's result", r)
			}
			if r := f.next(t, agent.EventReply); r.Reply.Text != "Pro it is." {
				t.Errorf("reply = %q", r.Reply.Text)
			}
			e.Wait()
			if got := history(t, st); !slices.Equal(got, wantHistory) {
				t.Errorf("history = %v, want %v", got, wantHistory)
			}
			var ended *agent.AskEndedError
			if again, err := e.Submit(context.Background(), sess, p.ID, agent.Answer{Declined: true}, nil); !errors.As(err, &ended) || again || ended.Status != "submitted" {
				t.Errorf("second Submit = %v, %v; want false, answered", again, err)
			}
		})
	}
}

// blocking answers its first call with the raise and then blocks until
// released: a process that dies in the middle of the resumed model step.
type blocking struct {
	released chan struct{}
	once     sync.Once
}

func (b *blocking) release() { b.once.Do(func() { close(b.released) }) }

func (b *blocking) Respond(ctx context.Context, req agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	if req.Position == 0 {
		return agent.ModelResponse{ToolCalls: []store.ToolCall{{ID: "call-1", Name: "request_choices", Arguments: raise}}, Position: 1}, nil
	}
	<-b.released
	return agent.ModelResponse{Text: "too late", Position: 2}, nil
}

// TestEngineTakeover: engine A takes the answer and stops renewing its
// lease mid-turn (its process died); once the lease has run out engine B,
// on the same store, finishes the turn with exactly one reply, and A's late
// step is refused.
func TestEngineTakeover(t *testing.T) {
	for name, open := range stores(t) {
		if name == "memory" {
			continue // one process's memory: nobody else can take over
		}
		t.Run(name, func(t *testing.T) {
			st := open(t)
			clock := clockwork.NewFakeClock()
			dead := &blocking{released: make(chan struct{})}
			a := engine(t, st, dead, clock)
			t.Cleanup(dead.release) // before a's shutdown, even when the test fails
			sess, f, p := parkOne(t, a, st, "hello")
			if ok, err := a.Submit(context.Background(), sess, p.ID, agent.Answer{Values: []byte(picked)}, nil); err != nil || !ok {
				t.Fatalf("Submit = %v, %v", ok, err)
			}
			f.next(t, agent.EventToolResult)
			a.Close() // A's loop stops: nobody renews its lease

			b := engine(t, st, script(t, "Pro it is."), clock)
			waitFor(t, clock, func() bool { return slices.Contains(history(t, st), store.RoleReply) })
			dead.release() // A wakes up, too late
			a.Wait()
			b.Wait()
			if got := history(t, st); !slices.Equal(got, wantHistory) {
				t.Errorf("history = %v, want %v (one reply, A's late step refused)", got, wantHistory)
			}
			noOwedTurns(t, st, clock.Now(), "after the takeover")
		})
	}
}

// TestEngineAfterShutdown: no run starts once Shutdown has begun. An
// answer taken then is kept, and its turn stays owed for the next process;
// a new message is refused at once rather than hang: that turn is owed.
func TestEngineAfterShutdown(t *testing.T) {
	for name, open := range stores(t) {
		if name == "memory" {
			continue // one process's memory: no next process
		}
		t.Run(name, func(t *testing.T) {
			st := open(t)
			clock := clockwork.NewFakeClock()
			a := engine(t, st, script(t, "Pro it is."), clock)
			sess, _, p := parkOne(t, a, st, "hello")
			if err := a.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			acked := false
			if ok, err := a.Submit(context.Background(), sess, p.ID, agent.Answer{Values: []byte(picked)}, func(agent.Taken) { acked = true }); err != nil || !ok || !acked {
				t.Fatalf("Submit after Shutdown = %v, %v (acked %v)", ok, err, acked)
			}
			if err := a.Send(context.Background(), sess, agent.Message{RequestID: "r2", Text: "anyone there?"}, nil); !errors.Is(err, agent.ErrTurnInProgress) {
				t.Errorf("a message while the answered turn is owed: %v, want ErrTurnInProgress", err)
			}

			b := engine(t, st, script(t, "Pro it is."), clock)
			waitFor(t, clock, func() bool { return slices.Contains(history(t, st), store.RoleReply) })
			b.Wait()
			if got := history(t, st); !slices.Equal(got, wantHistory) {
				t.Errorf("history = %v, want %v", got, wantHistory)
			}
		})
	}
}

// historyReads counts the store's reads of a conversation and its history.
type historyReads struct {
	store.Store
	n, convs atomic.Int32
}

func (h *historyReads) Messages(ctx context.Context, id string, roles []store.Role, before string, limit int) ([]*store.Message, bool, error) {
	h.n.Add(1)
	return h.Store.Messages(ctx, id, roles, before, limit)
}

func (h *historyReads) Conversation(ctx context.Context, id string) (*store.Conversation, error) {
	h.convs.Add(1)
	return h.Store.Conversation(ctx, id)
}

// seenHistory wraps a model and records the roles of the history of
// each call.
type seenHistory struct {
	agent.Model
	mu    sync.Mutex
	calls [][]store.Role
}

func (s *seenHistory) Respond(ctx context.Context, req agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	var roles []store.Role
	for _, m := range req.History {
		roles = append(roles, m.Role)
	}
	s.mu.Lock()
	s.calls = append(s.calls, roles)
	s.mu.Unlock()
	return s.Model.Respond(ctx, req, onText)
}

// TestEngineResumeKeepsHistory: a turn resumed in the process it parked in
// goes on from the conversation and history it held, with the answer, and
// does not read them again; one that held too long a history reads it,
// and sees the same; capabilities declared anew are read again.
func TestEngineResumeKeepsHistory(t *testing.T) {
	for name, tc := range map[string]struct {
		message      string
		declared     bool
		reads, convs int32
	}{
		"short":         {"hello", false, 1, 1},
		"long":          {strings.Repeat("x", 20<<10), false, 2, 1},
		"declared anew": {"hello", true, 1, 2},
	} {
		t.Run(name, func(t *testing.T) {
			st := &historyReads{Store: memstore.New()}
			m := &seenHistory{Model: script(t, "Pro it is.")}
			e := engine(t, st, m, clockwork.NewFakeClock())
			sess, f, p := parkOne(t, e, st, tc.message)
			if tc.declared {
				if err := e.SetSupports(context.Background(), "c1", []string{"choice_chips"}); err != nil {
					t.Fatal(err)
				}
			}
			if ok, err := e.Submit(context.Background(), sess, p.ID, agent.Answer{Values: []byte(picked)}, nil); err != nil || !ok {
				t.Fatalf("Submit = %v, %v", ok, err)
			}
			f.next(t, agent.EventReply)
			e.Wait()
			if got := st.n.Load(); got != tc.reads {
				t.Errorf("history read %d times, want %d", got, tc.reads)
			}
			if got := st.convs.Load(); got != tc.convs {
				t.Errorf("conversation read %d times, want %d", got, tc.convs)
			}
			want := [][]store.Role{{store.RoleUser}, {store.RoleUser, store.RoleAssistant, store.RoleTool}}
			if !slices.EqualFunc(m.calls, want, slices.Equal) {
				t.Errorf("the model saw %v, want %v", m.calls, want)
			}
		})
	}
}

// TestEngineDeadline: a park nobody answers resolves no_response at its
// deadline, with nobody following, and the turn's reply is stored.
func TestEngineDeadline(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			clock := clockwork.NewFakeClock()
			e := engine(t, st, script(t, "Maybe later."), clock)
			sess := conversation(t, st, "", "choice_chips")
			f := newFollower()
			f.start(e, sess, "hello")
			f.next(t, agent.EventPrompt)
			waitFor(t, clock, func() bool { return slices.Contains(history(t, st), store.RoleReply) }, time.Hour)
			e.Wait()
			msgs, _, err := st.Messages(context.Background(), "c1", []store.Role{store.RoleTool}, "", 10)
			if err != nil || len(msgs) != 1 || msgs[0].Text != kindkit.NoResponse().JSON() {
				t.Fatalf("tool results = %v, %v; want one no_response", msgs, err)
			}
		})
	}
}

// waitFor advances the fake clock, first by skip, then a second at a
// time, until done holds.
func waitFor(t *testing.T, clock *clockwork.FakeClock, done func() bool, skip ...time.Duration) {
	t.Helper()
	for _, d := range skip {
		clock.Advance(d)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatal("never happened")
		}
		clock.Advance(time.Second)
		time.Sleep(5 * time.Millisecond) // let the engine's loop run; the clock is fake
	}
}

// lateRenewals is a store whose lease renewals fail, as they do late in a
// starved process.
type lateRenewals struct{ store.Store }

func (lateRenewals) RenewLease(context.Context, store.Lease) error {
	return errors.New("the database is slow")
}

// calls counts a model's calls and blocks each until released.
type calls struct {
	n        atomic.Int32
	released chan struct{}
}

func (c *calls) Respond(ctx context.Context, req agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	c.n.Add(1)
	select {
	case <-c.released:
	case <-ctx.Done():
		return agent.ModelResponse{}, ctx.Err()
	}
	return agent.ModelResponse{Text: "done", Position: req.Position + 1}, nil
}

// TestNoSelfTakeover: a turn whose lease ran out while it still runs
// here (its renewals late) is not taken over by its own engine: a second
// run would make a second model call, and the run its client aborts
// would be the one stopped, not the one that replies.
func TestNoSelfTakeover(t *testing.T) {
	st := lateRenewals{memstore.New()}
	clock := clockwork.NewFakeClock()
	m := &calls{released: make(chan struct{})}
	e := engine(t, st, m, clock)
	t.Cleanup(func() { close(m.released) })
	sess := conversation(t, st, "")
	f := newFollower()
	f.start(e, sess, "hello")
	for m.n.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	// Many sweeps after the lease ran out.
	for range 30 {
		clock.Advance(time.Second)
		time.Sleep(5 * time.Millisecond)
	}
	if n := m.n.Load(); n != 1 {
		t.Errorf("the model was called %d times, want once: the engine took its own running turn over", n)
	}
}

// A subscriber is told its events with no lock of the engine held: one
// that is slow to take an event holds up only the turn whose event it is,
// never another conversation's.
func TestSlowSubscriber(t *testing.T) {
	st := memstore.New()
	e := engine(t, st, scripted(t, agent.ScriptEntry{Kind: "text", Text: "Hi."}), clockwork.NewRealClock())
	slow := conversation(t, st, "")
	ctx := context.Background()
	if err := st.CreateConversation(ctx, &store.Conversation{ID: "c2", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	other := &store.Session{ID: "s2", ConversationID: "c2"}
	if err := st.CreateSession(ctx, other); err != nil {
		t.Fatal(err)
	}
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	stopSlow := e.Subscribe(ctx, slow.ConversationID, agent.Position{}, func(agent.Event) {
		once.Do(func() { close(held) })
		<-release
	})
	sent := make(chan error, 1)
	go func() { sent <- e.Send(ctx, slow, agent.Message{RequestID: "r1", Text: "hello"}, nil) }()
	<-held // Send waits for its message to be told: it returns once released
	defer func() {
		close(release)
		if err := <-sent; err != nil {
			t.Error(err)
		}
		stopSlow()
		e.Wait()
	}()

	f := newFollower()
	go func() {
		e.Subscribe(ctx, other.ConversationID, agent.Position{}, func(ev agent.Event) { f.events <- ev })
		if err := e.Send(ctx, other, agent.Message{RequestID: "r2", Text: "hello"}, nil); err != nil {
			t.Error(err)
		}
	}()
	if reply := f.next(t, agent.EventReply); reply.Reply.Text != "Hi." {
		t.Errorf("the other conversation's reply: %+v", reply.Reply)
	}
}

// A cancel and an answer racing for a shown card: the store's take picks
// one. Cancelled, the answer is refused and nothing follows the turn's
// cancelled event; answered, the card keeps the answer, and the cancel
// stops the run it resumed, if it still runs. Either way the turn ends
// once, and nothing is told after its end.
func TestCancelRacesAnswer(t *testing.T) {
	ctx := context.Background()
	for range 40 {
		st := memstore.New()
		e := engine(t, st, script(t, "Pro it is."), clockwork.NewFakeClock())
		sess, f, p := parkOne(t, e, st, "hello")
		f.next(t, agent.EventToolCall) // the raise's chunk, shown with its prompt
		var answered bool
		var wg sync.WaitGroup
		wg.Go(func() {
			ok, err := e.Submit(ctx, sess, p.ID, agent.Answer{Values: []byte(picked)}, nil)
			var ended *agent.AskEndedError
			if err != nil && !(errors.As(err, &ended) && ended.Status == "cancelled") {
				t.Error(err) // losing to the cancel, it learns the card was stopped
			}
			answered = ok
		})
		wg.Go(func() { e.Cancel(ctx, sess.ConversationID, "r1") })
		wg.Wait()
		e.Wait()
		var told []agent.EventKind
		for more := true; more; {
			select {
			case ev := <-f.events:
				told = append(told, ev.Kind)
			default:
				more = false
			}
		}
		ends := 0
		for i, k := range told {
			if k == agent.EventReply || k == agent.EventCancelled || k == agent.EventFailed {
				ends++
				if i != len(told)-1 {
					t.Fatalf("told %v: something after the turn's end", told)
				}
			}
		}
		if ends != 1 {
			t.Fatalf("told %v (answered %v): want one end", told, answered)
		}
		parks, err := st.EndedParks(ctx, "c1", time.Time{}, "", 10)
		if err != nil || len(parks) != 1 {
			t.Fatalf("ended parks %v, %v", parks, err)
		}
		if answered != (parks[0].State == store.ParkResolved) || (!answered && told[0] != agent.EventCancelled) {
			t.Fatalf("answered %v, the card ended %s, told %v", answered, parks[0].State, told)
		}
	}
}
