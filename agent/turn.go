package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/store"
)

// A turn is one user message and everything it causes, until its terminal
// event. While it runs it has a goroutine; while it is parked it is only the
// park record in the store (and, for speed, this struct, held while someone
// here subscribes to its conversation).
// A running turn is owed its reply, from its message on (Send) and again
// from the answer that resumed it: it runs under a lease in the store,
// every step it takes is stored with its state, and if its process dies
// another run picks it up after the last stored step.
type turn struct {
	eng       *Engine
	session   *store.Session
	requestID string
	ctx       context.Context
	cancel    context.CancelFunc
	state     turnState
	parked    atomic.Pointer[waiting] // set while parked
	cancelled atomic.Bool             // by the person, not by a lost lease or a drain
	finished  bool                    // its terminal event was told; under emitMu
	shown     bool                    // its park's prompt was told; under emitMu
	ended     chan struct{}           // closed when its run ended (end ran), or did not start

	// emitMu orders the turn's events on the engine's stream, and keeps
	// every event after a cancel from it (lock order: see Engine).
	emitMu sync.Mutex
	// pos is the stream's position after the turn's last event, under
	// emitMu: the Seq of the last message it stored (zero while it knows
	// none: it was taken over) and the offset since. fresh: a message was
	// stored since the last event, whose own event is at its offset 0.
	pos   Position
	fresh bool
	// before is where the stream was before the last message stored:
	// where a call told after the write that stored its result goes.
	// Touched only by the run's goroutine.
	before Position

	leaseMu sync.Mutex
	lease   *store.Lease // the lease of the owed turn this is, nil when none

	first *Event // what a resume shows first: the answer's tool result
	after string // the park this run of the turn resumed from; "" in its first run

	answeredAt time.Time // when the answer this run resumes with came; zero when none
	// notResumed: this names the turn of an answer that was stored but
	// resumes nothing, one of a group's parks that others still wait on.
	notResumed bool

	// streamed is what the model call under way has said so far, for the
	// record of a turn that ends before its reply (endedMessage); touched
	// only by the run's goroutine.
	streamed strings.Builder

	// Telemetry of the current run, touched only by its goroutine.
	span       trace.Span // the run's
	toolSpan   trace.Span // the tool call's that runs, nil between calls
	toolFailed bool       // the running tool call's result is an error
	outcome    string     // how the run ended: OutcomeReply, OutcomeFailed, "parked"; "" when stopped

	// Read from the store when a run needs them, then kept up to date by
	// the turn itself (and kept across a park, see inherit): the
	// conversation and the model's view of its history.
	conv *store.Conversation
	log  []*store.Message

	raised *kindkit.Spec // the spec of the raise that parks, for waiting
	expiry expiry        // the deadline policy of the ask that parks; zero: the engine's default
	// opening are the raises of the model step that wait to be opened
	// together with the next one (ParallelAsks): they park as one group.
	opening   []opening
	addressee string // whom the ask that parks is addressed to; "" anyone

	// held is the model step whose tool calls run now, not stored yet:
	// the first call's write takes it along (its result's, or its park's),
	// and a host tool's call is stored on its own before the tool runs.
	held *store.Step
}

// SubmitToolName is the generic tool of the conversational path, through
// which the model submits what the person said for a card it could not
// show; its result is the card's payload.
const SubmitToolName = "submit_interaction"

const (
	deniedResult       = "Denied by human: user rejected the action"
	submitToolSchema   = `{"type":"object","properties":{"kind":{"type":"string","enum":%s,"description":"The interaction kind whose fallback you followed."},"values":{"type":"object","description":"The values the visitor gave, shaped as the fallback instructions say."},"declined":{"type":"boolean","description":"True when the visitor refused to answer."}},"required":["kind"]}`
	submitToolDescribe = "Submit what the visitor told you in conversation for an interaction whose card this channel cannot show. The values are checked; on errors, re-ask the visitor and submit again."
	historyLimit       = 50
)

// ErrTurnInProgress is Send's error when a turn of the conversation runs
// (here or in another process, or waiting to be taken over), or waits on
// a card of the sender's own session that the message does not withdraw:
// a conversation runs one turn at a time, and the message is not stored.
var ErrTurnInProgress = errors.New("agent: a turn of the conversation is in progress")

// Message is a person's message, the start of a turn.
type Message struct {
	RequestID string // names the turn on the wire
	Text      string
	// Made is the conversation, as the caller made it in this process,
	// when this is its first message: the write finds it as it was made,
	// and the turn then knows its conversation and its history without
	// reading them. When it was touched since, Send stores nothing and
	// returns ErrTurnInProgress: send again without Made.
	Made *store.Conversation
	// Withdraw is the id of the card waiting for the sender's own session
	// that the message answers in words: the card is withdrawn and the
	// message starts the next turn. A card of another session is
	// withdrawn without it (another tab, another person); the sender's
	// own card without it refuses the message (ErrTurnInProgress).
	Withdraw string
}

// Send stores m, a message of session sess, as the start of a turn, calls
// ack, and runs the turn. From the write on the message is owed its reply:
// the turn runs under a lease in the store, and if this process dies
// another takes it over (Abort, told that the client went away, aborts
// it). ack runs before any event of the turn is told, so a caller queues
// its acknowledgement there. ErrTurnInProgress, with nothing stored, when
// another turn of the conversation is owed a reply, or when a card waits
// that the message may not withdraw (Message.Withdraw). What a message
// does while a card waits is decided in the write that stores it, so a
// turn that parks meanwhile, here or in another process, is seen. On a
// store that processes share, the turn is told here only once the relay
// brought what another process told before it (a few seconds at most),
// so the subscribers here see the turns in the order they ran.
func (e *Engine) Send(ctx context.Context, sess *store.Session, m Message, ack func()) error {
	t := e.newTurn(sess, turnState{RequestID: m.RequestID})
	msg := t.userMessage(m.Text)
	l := e.lease(store.NewID()) // the running turn's park
	record := &store.Park{ID: l.ParkID, Type: store.ParkTurn, ConversationID: sess.ConversationID, SessionID: sess.ID,
		State: store.ParkRunning, Turn: t.state.encode(), Owed: true, LeaseOwner: l.Owner, LeaseUntil: l.Until, CreatedAt: msg.CreatedAt}
	waiting := func(p *store.Park) *store.Answer {
		via := ViaWithdraw
		if p.SessionID == sess.ID {
			if p.ID != m.Withdraw && (m.Withdraw == "" || p.Group == "") {
				// The sender's own card: answer it, or withdraw it by
				// name; naming one card of a group withdraws the group
				// (its turn ends).
				return nil
			}
			via = ViaWords
		}
		return e.withdrawal(ctx, p, sess, via, msg.CreatedAt)
	}
	withdrawn, ok, err := e.cfg.Store.StartTurn(ctx, msg, record, m.Made, waiting)
	if err == nil && !ok && m.Made == nil && e.awaitCancelled(ctx, sess.ConversationID) {
		withdrawn, ok, err = e.cfg.Store.StartTurn(ctx, msg, record, nil, waiting)
	}
	if err != nil || !ok {
		t.cancel()
		return cmp.Or(err, ErrTurnInProgress)
	}
	if m.Made == nil {
		// The turn before this one may have run in another process, its
		// events still on their way here: they come first.
		e.stream.caughtUp(ctx, sess.ConversationID, min(relayCatchUp, e.cfg.LeaseTimeout/3))
	}
	if len(withdrawn) > 0 {
		e.withdrawn(withdrawn)
	}
	if m.Made != nil {
		t.conv, t.log = m.Made, []*store.Message{msg}
	}
	var at Position
	if msg.Seq > 0 {
		at = Position{seq: msg.Seq}
	}
	t.pos = at
	e.hold(t, l)
	if ack != nil {
		ack()
	}
	// The conversation's other clients (another tab, another process)
	// see what was sent, not only the reply to it.
	e.observe(sess.ConversationID, Event{Kind: EventMessage, RequestID: m.RequestID, Message: msg, Pos: at})
	e.metrics.TurnStarted()
	t.goRun(func() {
		t.state.Citations = e.cite(t.ctx, m.Text)
		t.run()
	})
	return nil
}

// awaitCancelled waits for the run of a turn of conv that was cancelled
// here, and is still owed until its run ends, to end; false when there is
// none. The person who stopped a turn may send the next message at once.
func (e *Engine) awaitCancelled(ctx context.Context, conv string) bool {
	var t *turn
	e.mu.Lock()
	for _, lt := range e.leased {
		if lt.session.ConversationID == conv && lt.cancelled.Load() {
			t = lt
			break
		}
	}
	e.mu.Unlock()
	if t == nil {
		return false
	}
	// Bounded: a host tool that does not heed its context keeps the run
	// going, and the message then gets ErrTurnInProgress.
	select {
	case <-t.ended:
		return true
	case <-ctx.Done():
	case <-e.clock.After(e.cfg.LeaseTimeout):
	}
	return false
}

func (e *Engine) newTurn(sess *store.Session, state turnState) *turn {
	ctx, cancel := context.WithCancel(context.Background())
	return &turn{eng: e, session: sess, requestID: state.RequestID, ctx: ctx, cancel: cancel, state: state, ended: make(chan struct{})}
}

// waitsOn tells whether the turn is parked on park id (one of a group's
// too).
func (t *turn) waitsOn(id string) bool {
	w := t.parked.Load()
	return w != nil && (w.find(id, store.ParkInteraction) != nil || w.find(id, store.ParkConfirmation) != nil)
}

// parkID is the park the turn waits on (a group's first), "" while it runs.
func (t *turn) parkID() string {
	if w := t.parked.Load(); w != nil {
		return w.park.ID
	}
	return ""
}

// waiting is what a parked turn waits on: its park, as it was saved, and
// the spec its raise checked (nil when it has none at hand); for the parks
// of a group, the first, and the others in rest.
type waiting struct {
	park *store.Park
	spec *kindkit.Spec
	rest []*waiting
}

// find is the park id the turn waits on, of type typ; nil when it waits
// on no such park.
func (w *waiting) find(id string, typ store.ParkKind) *waiting {
	if w.park.ID == id && w.park.Type == typ {
		return w
	}
	for _, c := range w.rest {
		if c.park.ID == id && c.park.Type == typ {
			return c
		}
	}
	return nil
}

// opening is a park to be saved, with the spec and the deadline policy
// its raise checked.
type opening struct {
	park      *store.Park
	spec      *kindkit.Spec
	expiry    expiry
	addressee string // whom it is addressed to; "" anyone
}

// ParallelAsks is the capability (a value of a conversation's supports)
// under which the raise calls of one model step open their cards all at
// once, each answered on its own in any order, and the turn resumes once
// the last is settled. Without it they open one at a time, each after the
// previous one's answer.
const ParallelAsks = "kindkit.parallel_asks"

func (t *turn) userMessage(text string) *store.Message {
	return &store.Message{ID: store.NewID(), ConversationID: t.session.ConversationID, Role: store.RoleUser,
		Text: text, CreatedAt: t.eng.clock.Now().UTC()}
}

// goRun runs the turn on a worker; a panic ends the turn with
// EventFailed, not the process. Once Shutdown has begun no run starts: a
// turn owed a reply stays owed for the next process, any other fails.
func (t *turn) goRun(fn func()) {
	if !t.eng.runStarts() {
		defer close(t.ended)
		t.eng.log.Warn("turn not run: the engine is shutting down", "requestId", t.requestID)
		if _, owed := t.heldLease(); owed {
			t.stop()
			return
		}
		t.finish(Event{Kind: EventFailed})
		t.cancel()
		return
	}
	t.eng.workers.run(func() {
		defer t.eng.runEnded()
		defer close(t.ended)
		defer t.end()
		t.startRun()
		defer t.endRun()
		defer func() {
			if r := recover(); r != nil {
				t.eng.log.Error("turn panicked", "requestId", t.requestID, "panic", r)
				t.fail(fmt.Errorf("panic: %v", r))
			}
		}()
		fn()
	})
}

// resumed is the run of a turn an answer resumed: the answer's chunk, then
// the loop.
func (t *turn) resumed() {
	if !t.answeredAt.IsZero() {
		t.eng.metrics.Resumed(time.Since(t.answeredAt))
	}
	if t.first != nil {
		t.emit(*t.first)
	}
	t.run()
}

// end runs when the turn's goroutine ends. An owed turn that a person
// cancelled stops being owed; one stopped otherwise (its lease was lost,
// or the process is going away) stays owed for whoever runs it next.
func (t *turn) end() {
	if !t.cancelled.Load() {
		t.dropLease()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := t.underLease(true, func(l store.Lease) error {
		return t.eng.cfg.Store.SaveStep(ctx, l, store.Step{Turn: t.state.encode(), Done: true,
			Messages: []*store.Message{t.endedMessage(false)}})
	}); err != nil && !errors.Is(err, store.ErrLeaseLost) {
		t.eng.log.Error("cancel owed turn", "requestId", t.requestID, "err", err)
	}
}

// endedMessage records that the turn ended without its reply, stopped or
// failed, with what the person saw of the reply (store.RoleEnded).
func (t *turn) endedMessage(failed bool) *store.Message {
	return endedMessage(t.session.ConversationID, JoinSteps(t.state.Text, t.streamed.String()), failed, t.eng.clock.Now())
}

func endedMessage(conv, said string, failed bool, now time.Time) *store.Message {
	return &store.Message{ID: store.NewID(), ConversationID: conv, Role: store.RoleEnded, Text: said, IsError: failed, CreatedAt: now.UTC()}
}

func (t *turn) setLease(l *store.Lease) {
	t.leaseMu.Lock()
	t.lease = l
	t.leaseMu.Unlock()
}

// heldLease returns the turn's lease; false when it owes no reply.
func (t *turn) heldLease() (store.Lease, bool) {
	t.leaseMu.Lock()
	defer t.leaseMu.Unlock()
	if t.lease == nil {
		return store.Lease{}, false
	}
	return *t.lease, true
}

// underLease runs write with the turn's lease, extended to a lease timeout
// from now, while no renewal of it can run; owed is false (and write is not
// run) when the turn owes no reply. The lease is let go when write lost it,
// or when it succeeded and last is set: then nothing is owed any more.
//
// Lock order: see Engine.
func (t *turn) underLease(last bool, write func(l store.Lease) error) (owed bool, err error) {
	t.leaseMu.Lock()
	defer t.leaseMu.Unlock()
	if t.lease == nil {
		return false, nil
	}
	l := *t.lease
	l.Until = t.eng.clock.Now().Add(t.eng.cfg.LeaseTimeout)
	err = write(l)
	if (err == nil && last) || errors.Is(err, store.ErrLeaseLost) {
		t.lease = nil
		t.eng.letGo(t, l.ParkID)
	} else if err == nil {
		t.lease = &l
	}
	return true, err
}

// dropLease forgets the turn's lease: it is another process's now, or the
// process is going away and the next one runs the turn.
func (t *turn) dropLease() {
	t.leaseMu.Lock()
	defer t.leaseMu.Unlock()
	if t.lease != nil {
		t.eng.letGo(t, t.lease.ParkID)
		t.lease = nil
	}
}

// stop ends the turn's run without a word: another process runs it now,
// or the next one will.
func (t *turn) stop() {
	t.dropLease()
	t.cancel()
}

func (t *turn) emit(ev Event) { t.tell(ev, false, nil) }

func (t *turn) finish(ev Event) { t.tell(ev, true, nil) }

// tell tells the conversation's subscribers an event of the turn, at
// position at, or else where the stream is; nothing after a cancel.
func (t *turn) tell(ev Event, last bool, at *Position) {
	ev.RequestID, ev.After = t.requestID, t.after
	t.emitMu.Lock()
	if t.cancelled.Load() {
		t.emitMu.Unlock()
		return
	}
	if at != nil {
		ev.Pos = *at
	} else {
		ev.Pos = t.advance(ev.Kind, len(ev.Text))
	}
	if last {
		t.finished = true
		t.outcome = OutcomeFailed
		if ev.Kind == EventReply {
			t.outcome = OutcomeReply
		}
		t.eng.metrics.TurnFinished(t.outcome)
	}
	d := t.eng.stream.post(t.session.ConversationID, ev)
	t.emitMu.Unlock()
	d.run()
}

// advance moves the stream's position past an event of kind with n
// bytes of text, and returns the event's; zero while the turn knows no
// stored message. Under emitMu.
func (t *turn) advance(kind EventKind, n int) Position {
	if t.pos.seq == 0 {
		return Position{}
	}
	switch {
	case t.fresh && (kind == EventToolResult || kind == EventReply || kind == EventFailed):
		// The event of the message just stored: at its offset 0.
	case kind == EventText:
		t.pos.off += int64(n)
	default:
		t.pos.off++
	}
	t.fresh = false
	return t.pos
}

// stored moves the stream's position to msgs, just stored by the turn.
func (t *turn) stored(msgs []*store.Message) {
	n := len(msgs)
	if n == 0 {
		return
	}
	t.emitMu.Lock()
	defer t.emitMu.Unlock()
	t.before = t.pos
	if n > 1 {
		t.before = Position{seq: msgs[n-2].Seq}
	}
	t.pos, t.fresh = Position{seq: msgs[n-1].Seq}, true
}

// markCancelled marks the turn cancelled by a person and tells the
// subscribers its cancelled event: the last anyone hears of it, once.
func (t *turn) markCancelled() {
	t.emitMu.Lock()
	t.markCancelledLocked()
}

// cancelUnlessShown is markCancelled, unless the turn has shown a park's
// prompt (true): then only the take of the park may end it. A turn that
// parks sees the mark before it shows its prompt, and takes its own park.
func (t *turn) cancelUnlessShown() (shown bool) {
	t.emitMu.Lock()
	if t.shown {
		t.emitMu.Unlock()
		return true
	}
	t.markCancelledLocked()
	return false
}

// markCancelledLocked is markCancelled with emitMu held, which it
// releases.
func (t *turn) markCancelledLocked() {
	if t.finished || t.cancelled.Swap(true) {
		t.emitMu.Unlock()
		return
	}
	t.eng.metrics.TurnFinished(OutcomeCancelled)
	ev := Event{Kind: EventCancelled, RequestID: t.requestID, After: t.after}
	if id := t.parkID(); id != "" {
		ev.After = id
	}
	if t.pos.seq != 0 {
		// The last of the turn before the record of its end is stored.
		ev.Pos = Position{seq: t.pos.seq, off: endOfSegment}
	}
	d := t.eng.stream.post(t.session.ConversationID, ev)
	t.emitMu.Unlock()
	d.run()
}

// fail ends the turn with EventFailed; details stay in the log. An owed
// turn stops being owed: running it again would fail again.
func (t *turn) fail(err error) {
	if t.ctx.Err() != nil {
		return // cancelled or aborted: nobody is waiting for an answer
	}
	if errors.Is(err, store.ErrLeaseLost) {
		t.eng.log.Warn("lease lost; another process runs the turn", "requestId", t.requestID)
		t.stop()
		return
	}
	t.eng.log.Error("turn failed", "requestId", t.requestID, "err", err)
	if _, err := t.underLease(true, func(l store.Lease) error {
		ended := []*store.Message{t.endedMessage(true)}
		err := t.eng.cfg.Store.SaveStep(context.Background(), l, store.Step{Turn: t.state.encode(), Done: true, Messages: ended})
		if err == nil {
			t.stored(ended)
		}
		return err
	}); err != nil {
		// The turn stays owed and is tried again by whoever takes it.
		t.eng.log.Error("end failed turn", "requestId", t.requestID, "err", err)
		t.dropLease()
	}
	t.finish(Event{Kind: EventFailed})
	t.cancel()
}

// save stores a step of the turn, after the held model step if there is
// one: under its lease when it is owed (the step, its state and the model
// position in one write), otherwise as plain appends. The model's view of
// the history follows.
func (t *turn) save(step store.Step) error {
	st := t.eng.cfg.Store
	if h := t.held; h != nil {
		t.held = nil
		step.Messages = append(slices.Clip(h.Messages), step.Messages...)
		if step.ModelPos == nil {
			step.ModelPos = h.ModelPos
		}
	}
	step.Turn = t.state.encode()
	owed, err := t.underLease(step.Done, func(l store.Lease) error { return st.SaveStep(t.ctx, l, step) })
	if err != nil {
		return err
	}
	if !owed {
		if len(step.Messages) > 0 {
			if err := st.AppendMessages(t.ctx, step.Messages...); err != nil {
				return err
			}
		}
		if step.ModelPos != nil {
			if err := st.SetModelPos(t.ctx, t.session.ConversationID, *step.ModelPos); err != nil {
				return err
			}
		}
	}
	t.stored(step.Messages)
	t.logged(step.Messages)
	return nil
}

// logged adds stored messages to the model's view of the history.
func (t *turn) logged(msgs []*store.Message) {
	if t.log == nil {
		return
	}
	for _, m := range msgs {
		if m.Role != store.RoleReply {
			t.log = append(t.log, m)
		}
	}
	if extra := len(t.log) - historyLimit; extra > 0 {
		t.log = t.log[extra:]
	}
}

// flush stores the held model step on its own, with call, which the loop
// took from Pending to run, still pending: a host tool's call is stored
// before the tool runs, and a process that dies while it runs leaves the
// call to run again.
func (t *turn) flush(call store.ToolCall) error {
	if t.held == nil {
		return nil
	}
	rest := t.state.Pending
	t.state.Pending = append([]store.ToolCall{call}, rest...)
	err := t.save(store.Step{})
	t.state.Pending = rest
	return err
}

// run is the agent loop: answer the pending tool calls, call the model, and
// again, until the model answers without tools or a tool parks the turn.
func (t *turn) run() {
	e := t.eng
	// What the turn told so far (its message, the answer it resumes from)
	// goes to the other processes before the turn can end in the store: a
	// turn that starts elsewhere after this one then hears this one begin
	// (stream.caughtUp), and waits for its end.
	e.stream.flush(t.ctx)
	for {
		for len(t.state.Pending) > 0 {
			if t.ctx.Err() != nil {
				return
			}
			call := t.state.Pending[0]
			t.state.Pending = t.state.Pending[1:]
			parked, err := t.runTool(call)
			if err == nil && !parked && len(t.opening) > 0 && !t.raiseNext() {
				parked, err = t.parkAll()
			}
			if err != nil {
				t.fail(err)
				return
			}
			if parked {
				return
			}
		}
		if t.ctx.Err() != nil {
			return
		}
		conv, err := t.conversation()
		if err != nil {
			t.fail(err)
			return
		}
		history, err := t.history()
		if err != nil {
			t.fail(err)
			return
		}
		mctx, mspan := t.startModel()
		resp, err := e.cfg.Model.Respond(mctx, ModelRequest{
			ConversationID: conv.ID, Position: conv.ModelPos, History: history, Tools: t.tools(conv),
			Knowledge: e.documents(mctx, t.state.Citations),
		}, func(text string) {
			if text != "" {
				t.streamed.WriteString(text)
				t.emit(Event{Kind: EventText, Text: text})
			}
		})
		endModel(mspan, resp.Usage, err)
		e.metrics.ModelCall(resp.Usage, err != nil)
		if t.ctx.Err() != nil {
			return
		}
		if err != nil {
			t.fail(fmt.Errorf("model: %w", err))
			return
		}
		var step store.Step
		if resp.Position != conv.ModelPos {
			step.ModelPos = &resp.Position
			conv.ModelPos = resp.Position
		}
		t.streamed.Reset()
		t.state.Text = JoinSteps(t.state.Text, resp.Text)
		t.state.Usage = t.state.Usage.Add(resp.Usage)
		for i := range resp.ToolCalls {
			if resp.ToolCalls[i].ID == "" {
				// A tool call id is no key (it is kept in the message's
				// JSON), and models have seen this form: it stays v4.
				resp.ToolCalls[i].ID = "call-" + uuid.NewString()
			}
		}
		if resp.Text != "" || len(resp.ToolCalls) > 0 {
			step.Messages = []*store.Message{{ID: store.NewID(), ConversationID: conv.ID,
				Role: store.RoleAssistant, Text: resp.Text, ToolCalls: resp.ToolCalls, CreatedAt: e.clock.Now().UTC()}}
		}
		if len(resp.ToolCalls) == 0 {
			t.complete(step)
			return
		}
		// The step is stored by the first call's write (see held).
		t.state.Pending = resp.ToolCalls
		t.held = &step
	}
}

// JoinSteps appends the text of a model step to what the turn said
// before it, as a turn's reply is made: a step's text is a block of its own
// (the words before a card, then the answer after it), so a Markdown
// heading that opens the next step is not glued onto the last sentence.
func JoinSteps(before, step string) string {
	if before == "" || step == "" || strings.HasSuffix(before, "\n\n") || strings.HasPrefix(step, "\n") {
		return before + step
	}
	if strings.HasSuffix(before, "\n") {
		return before + "\n" + step
	}
	return before + "\n\n" + step
}

// heldLogBytes bounds the history a parked turn keeps for its resume, so
// that a held park stays small.
const heldLogBytes = 16 << 10

// logBytes is about what msgs hold.
func logBytes(msgs []*store.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Text)
		for _, c := range m.ToolCalls {
			n += len(c.Arguments)
		}
	}
	return n
}

// inherit starts the resumed turn from what the parked turn kept: its
// conversation, and its history with msgs, the messages the take stored.
// Called after the parked turn was unparked (e.mu orders it after
// CapabilitiesChanged).
func (t *turn) inherit(parked *turn, msgs []*store.Message) {
	if parked == nil {
		return
	}
	t.conv = parked.conv
	if parked.log != nil {
		t.log = slices.Clone(parked.log)
		t.logged(msgs)
	}
}

// conversation is the turn's conversation, read once.
func (t *turn) conversation() (*store.Conversation, error) {
	if t.conv == nil {
		conv, err := t.eng.cfg.Store.Conversation(t.ctx, t.session.ConversationID)
		if err != nil {
			return nil, err
		}
		t.conv = conv
	}
	return t.conv, nil
}

// complete stores the model's last words and the reply as the turn's last
// step and sends the reply.
func (t *turn) complete(step store.Step) {
	reply := &store.Message{ID: store.NewID(), ConversationID: t.session.ConversationID, Role: store.RoleReply,
		Text: t.state.Text, CreatedAt: t.eng.clock.Now().UTC()}
	step.Messages = append(step.Messages, reply)
	step.Done = true
	if err := t.save(step); err != nil {
		t.fail(err)
		return
	}
	t.finish(Event{Kind: EventReply, Reply: &Reply{MessageID: reply.ID, Text: t.state.Text, Usage: t.state.Usage, Citations: t.state.Citations}})
	t.cancel()
}

// history is what the model sees: the last messages of the conversation,
// oldest first, without tool calls that never got a result (a cancelled
// turn's) so every call the model sees is answered.
func (t *turn) history() ([]*store.Message, error) {
	if t.log == nil {
		msgs, _, err := t.eng.cfg.Store.Messages(t.ctx, t.session.ConversationID,
			[]store.Role{store.RoleUser, store.RoleAssistant, store.RoleTool}, "", historyLimit)
		if err != nil {
			return nil, err
		}
		slices.Reverse(msgs)
		t.log = msgs
	}
	msgs := slices.Clone(t.log)
	answered := map[string]bool{}
	for _, m := range msgs {
		if m.Role == store.RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	out := msgs[:0]
	for i, m := range msgs {
		if m.Role == store.RoleTool && (i == 0 || !hasCall(msgs[:i], m.ToolCallID)) {
			continue // its call fell outside the window
		}
		if m.Role == store.RoleAssistant && len(m.ToolCalls) > 0 {
			cp := *m
			cp.ToolCalls = slices.DeleteFunc(slices.Clone(m.ToolCalls), func(c store.ToolCall) bool { return !answered[c.ID] })
			if cp.Text == "" && len(cp.ToolCalls) == 0 {
				continue
			}
			m = &cp
		}
		out = append(out, m)
	}
	return out, nil
}

func hasCall(msgs []*store.Message, id string) bool {
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if c.ID == id {
				return true
			}
		}
	}
	return false
}

// supported tells whether the conversation declared a capability.
func supported(conv *store.Conversation, capability string) bool {
	return capability != "" && slices.Contains(conv.Supports, capability)
}

// tools are the host tools, then one raise tool per kind, then
// submit_interaction when some kind is on the conversational path.
func (t *turn) tools(conv *store.Conversation) []Tool {
	e := t.eng
	hosts := e.hostTools()
	tools := make([]Tool, 0, len(hosts)+len(e.raiseTools)+1)
	for _, ht := range hosts {
		tools = append(tools, ht.Tool)
	}
	tools = append(tools, e.raiseTools...)
	var names [16]string // on the stack: submitTool only reads it
	fallback := names[:0]
	for _, d := range e.kinds {
		if !supported(conv, d.Capability) && (d.ToolName != "" || t.state.AskedBy[d.Name].ID != "") {
			fallback = append(fallback, d.Name)
		}
	}
	if len(fallback) > 0 {
		tools = append(tools, e.submitTool(fallback))
	}
	return tools
}

// runTool runs one tool call under its span: it emits the call chunk and
// the result chunk and stores the result, or parks the turn.
func (t *turn) runTool(call store.ToolCall) (parked bool, err error) {
	t.startTool(call)
	t.toolFailed = false
	parked, err = t.runToolCall(call)
	failed := err != nil || t.toolFailed
	t.endTool(parked, failed)
	t.eng.metrics.ToolCall(t.eng.toolLabel(call.Name), failed)
	if parked && err == nil {
		t.outcome = "parked"
	}
	return parked, err
}

func (t *turn) runToolCall(call store.ToolCall) (parked bool, err error) {
	e := t.eng
	if k, ok := e.cfg.Catalog.ByTool(call.Name); ok {
		return t.raise(k, call)
	}
	if call.Name == SubmitToolName {
		// It runs host code (the kind's answer hooks, an asking host
		// tool): the call is stored first, as a host tool's.
		if err := t.flush(call); err != nil {
			return false, err
		}
		t.emit(Event{Kind: EventToolCall, Call: call})
		r, asker := t.submitTool(call)
		if ht, ok := e.hostTool(asker.Name); ok {
			// The answer of a host tool's Ask, given in conversation:
			// the tool runs again, and its result is this call's.
			parked, again, err := t.callHost(ht, asker)
			if parked || err != nil {
				return parked, err
			}
			r = again
		}
		return false, t.answer(call, r)
	}
	if ht, ok := e.hostTool(call.Name); ok {
		// A call that ran before and asked was allowed and shown then.
		rerun := len(t.state.Asked[call.ID]) > 0
		approved := t.state.Approved == call.ID
		if !approved && !rerun && t.eng.cfg.Confirm != nil && t.eng.cfg.Confirm(call.Name) != 0 {
			if e := t.eng; e.cfg.ConfirmTo != nil {
				t.addressee = e.cfg.ConfirmTo(call.Name)
			}
			return t.park(&store.Park{Type: store.ParkConfirmation, ToolCall: call})
		}
		// The tool may have effects: its call is stored before it runs.
		if err := t.flush(call); err != nil {
			return false, err
		}
		switch {
		case approved:
			// Approved by the person; its call chunk went out with the
			// confirmation.
			t.state.Approved = ""
		case !rerun:
			t.emit(Event{Kind: EventToolCall, Call: call})
		}
		parked, r, err := t.callHost(ht, call)
		if parked || err != nil {
			return parked, err
		}
		if t.state.Edited == call.ID {
			r.Text = editedNote(call.Arguments) + r.Text
			t.state.Edited = ""
		}
		return false, t.answer(call, r)
	}
	return false, t.answerUnshown(call, Result{Text: fmt.Sprintf("unknown tool '%s'", call.Name), IsError: true})
}

// runHost runs a host tool's call with the turn's context (cancel stops
// it) and a's Asks.
func (t *turn) runHost(ht HostTool, call store.ToolCall, a *asker) Result {
	info := CallInfo{ConversationID: t.session.ConversationID, SessionID: t.session.ID, CallID: call.ID, Asked: len(a.answers)}
	if conv, err := t.conversation(); err == nil {
		info.Principal = conv.Owner
	}
	ctx := context.WithValue(kindkit.WithAsker(t.ctx, a), liveKey{}, a)
	return runHost(ctx, ht, info, call.Arguments)
}

// answerUnshown stores the result of a call that was not told yet (with
// the model step that made it, when that is held), then tells the call and
// its result: told after the write, the call has the position the store's
// history gives it (see Position).
func (t *turn) answerUnshown(call store.ToolCall, r Result) error {
	msg := toolMessage(t.session.ConversationID, call, r, t.eng.clock.Now())
	if err := t.save(store.Step{Messages: []*store.Message{msg}}); err != nil {
		return err
	}
	at := t.before
	if at.seq != 0 {
		at.off++
	} else {
		at = Position{}
	}
	t.tell(Event{Kind: EventToolCall, Call: call}, false, &at)
	t.toolFailed = r.IsError
	t.emit(Event{Kind: EventToolResult, Call: call, Text: r.Text, IsError: r.IsError})
	return nil
}

// answer stores a tool result and emits its chunk.
func (t *turn) answer(call store.ToolCall, r Result) error {
	msg := toolMessage(t.session.ConversationID, call, r, t.eng.clock.Now())
	if err := t.save(store.Step{Messages: []*store.Message{msg}}); err != nil {
		return err
	}
	t.toolFailed = r.IsError
	t.emit(Event{Kind: EventToolResult, Call: call, Text: r.Text, IsError: r.IsError})
	return nil
}

// raise handles a kind's raise tool: a tool error when the arguments are
// wrong, the card when the conversation declared the capability, the
// conversational fallback otherwise.
func (t *turn) raise(k kindkit.Kind, call store.ToolCall) (bool, error) {
	d := k.Descriptor()
	r, err := k.ParseRaise([]byte(call.Arguments))
	if err != nil {
		return false, t.answerUnshown(call, Result{Text: err.Error(), IsError: true})
	}
	conv, err := t.conversation()
	if err != nil {
		return false, err
	}
	if !supported(conv, d.Capability) {
		t.state.stash(d.Name, r.Spec.JSON)
		return false, t.answerUnshown(call, Result{Text: k.Fallback(r.Spec, r.Reason)})
	}
	policy, err := t.eng.policy(k, &r.Spec, nil)
	if err != nil {
		// The kind's own default is not an answer to this spec: its
		// author's bug, which the model is told and the log keeps.
		t.eng.log.Error("a kind's deadline", "kind", d.Name, "err", err)
		return false, t.answerUnshown(call, Result{Text: err.Error(), IsError: true})
	}
	t.opening = append(t.opening, opening{park: &store.Park{Type: store.ParkInteraction, Kind: d.Name, Spec: r.Spec.JSON, Reason: r.Reason, ToolCall: call},
		spec: &r.Spec, expiry: policy, addressee: d.Addressee}) // the kind's (x-kind addressee), if any
	if supported(conv, ParallelAsks) && t.raiseNext() {
		return false, nil // opened with the next raise of the step
	}
	return t.parkAll()
}

// raiseNext tells whether the next call of the step is a raise, which
// opens its card together with the ones waiting to be opened.
func (t *turn) raiseNext() bool {
	if len(t.state.Pending) == 0 {
		return false
	}
	_, ok := t.eng.cfg.Catalog.ByTool(t.state.Pending[0].Name)
	return ok
}

// parkAll parks the turn on the cards waiting to be opened: one park, or
// the group of a step's raises, saved together.
func (t *turn) parkAll() (bool, error) {
	ps := t.opening
	t.opening = nil
	return t.parkOn(ps)
}

// park stores the turn as a park, with the held model step that raised it
// (an owed turn stops being owed in the same write), then tells the prompt
// and the deferred call chunk. The turn's goroutine ends; a submit, a
// confirmation, the deadline or a drain resumes it from the store.
func (t *turn) park(p *store.Park) (bool, error) {
	o := opening{park: p, spec: t.raised, expiry: t.expiry, addressee: t.addressee}
	t.raised, t.expiry, t.addressee = nil, expiry{}, ""
	return t.parkOn([]opening{o})
}

// parkOn is park for the parks ps, saved in one write: a model step's
// raises open together as a group, whose turn resumes once, when the last
// of them is settled (store.Park.Group). Each park keeps the turn's state
// with its own deadline policy and kind version.
func (t *turn) parkOn(ps []opening) (bool, error) {
	e := t.eng
	st := e.cfg.Store
	now := e.clock.Now().UTC()
	group := ""
	if len(ps) > 1 {
		group = store.NewID()
	}
	kept := t.state // what the turn resumes from
	kept.Trace, kept.ParkedAt = "", time.Time{}
	if sc := trace.SpanContextFromContext(t.spanCtx()); sc.IsValid() {
		kept.Trace, kept.ParkedAt = traceParent(sc), time.Now()
	}
	parks := make([]*store.Park, len(ps))
	held := make([]*waiting, len(ps))
	for i, o := range ps {
		p := o.park
		if p.ID == "" {
			p.ID = store.NewID()
		}
		p.ConversationID = t.session.ConversationID
		p.SessionID = t.session.ID
		p.Group = group
		// A nanosecond apart, so the stores list a group's parks in
		// their calls' order.
		p.CreatedAt = now.Add(time.Duration(i))
		p.Deadline = p.CreatedAt.Add(cmp.Or(o.expiry.After, e.cfg.ParkTimeout))
		p.State = store.ParkPending
		own := kept
		own.Expiry, own.Addressee = o.expiry.kept(), o.addressee
		p.Addressee = o.addressee // for the store's inbox (Engine.Inbox)
		if group != "" && own.Asking != "" {
			// One of a host tool's AskAll cards: its answer is its own
			// outcome, read back with the others' once the last is in.
			at := len(own.Asked[own.Asking]) + i
			own.AskGroup, own.AskSince, own.AskAt = group, now, &at
		}
		if k, ok := e.cfg.Catalog.Kind(p.Kind); ok && p.Type == store.ParkInteraction {
			own.KindVersion = k.Descriptor().Version // its answer is taken as asked, whatever a deploy changes
		}
		p.Turn = own.encode()
		parks[i], held[i] = p, &waiting{park: p, spec: o.spec}
	}
	p := parks[0]
	w := held[0]
	if len(held) > 1 {
		w.rest = held[1:]
	}
	// The newest raise wins: the store drops an older park of the
	// conversation, and its turn is let go of. An owed turn
	// stops being owed in the same write. SavePark does not move the
	// model position: a step that moves it is stored first, on its own.
	if t.held != nil && t.held.ModelPos != nil {
		if err := t.flush(p.ToolCall); err != nil {
			return false, err
		}
	}
	var msgs []*store.Message // the model response that raised the park
	if t.held != nil {
		msgs, t.held = t.held.Messages, nil
	}
	// Held from before the write, so that whoever cancels the turn finds
	// it parked here, never only its park in the store (whose cancel
	// would come before the prompt), with what a resume needs: its
	// conversation and a short history, from which a resume in this
	// process goes on instead of reading them again (the reads were 6% of
	// a cycle's CPU on SQLite). Capabilities declared anew meanwhile drop
	// the conversation (capabilitiesChanged). A resume reads them after
	// the take, which comes after the write.
	t.logged(msgs)
	if logBytes(t.log) > heldLogBytes {
		t.log = nil
	}
	t.parked.Store(w)
	e.mu.Lock()
	e.parked[p.ConversationID] = t
	e.mu.Unlock()
	var replaced []string
	save := func(from *store.Lease) (err error) {
		if len(parks) > 1 {
			replaced, err = st.SaveParks(t.ctx, parks, from, msgs...)
			return err
		}
		one, err := st.SavePark(t.ctx, p, from, msgs...)
		if one != "" {
			replaced = []string{one}
		}
		return err
	}
	owed, err := t.underLease(true, func(l store.Lease) error { return save(&l) })
	if !owed {
		err = save(nil)
	}
	if err != nil {
		e.unpark(p.ConversationID, p.ID)
		t.parked.Store(nil)
		return false, err
	}
	t.stored(msgs)
	for range parks {
		e.metrics.Parked()
	}
	for _, id := range replaced {
		e.metrics.ParkResolved(store.ParkReplaced)
		e.parkTaken(p.ConversationID, id)
	}
	prompt := make([]Event, 0, 2*len(parks))
	for _, p := range parks {
		prompt = append(prompt, Event{Kind: EventPrompt, RequestID: t.requestID, Park: p, After: t.after})
		if t.state.Asking == "" {
			// A raise's or a gated call's chunk comes after its prompt; a host
			// tool's that asks went out before it ran.
			prompt = append(prompt, Event{Kind: EventToolCall, RequestID: t.requestID, Call: p.ToolCall, After: t.after})
		}
	}
	e.mu.Lock()
	draining := e.draining && !e.cfg.KeepParksOnDrain
	e.mu.Unlock()
	if draining {
		// The process is going away with the store: nobody can answer
		// the card, and the turn goes on without it.
		e.unpark(p.ConversationID, p.ID)
		t.parked.Store(nil)
		for _, p := range parks {
			taken, ok, err := st.TakePark(t.ctx, p.ID, store.Answer{State: store.ParkExpired, Outcome: outcomeExpired,
				Record: e.record(t.ctx, p, kept, ViaDrain, nil, "")})
			if err != nil || !ok {
				return true, err
			}
			e.parkEnded(taken, kept, store.ParkExpired)
			if err := t.answerUnshown(p.ToolCall, e.expiredAnswer(taken)); err != nil {
				return false, err
			}
		}
		return false, nil
	}
	if !t.showPrompt(prompt) {
		// Cancelled while parking: the parks must not outlive the turn.
		e.unpark(p.ConversationID, p.ID)
		for _, p := range parks {
			if _, ok, _ := st.TakePark(context.Background(), p.ID, store.Answer{State: store.ParkCancelled,
				Record: e.record(t.ctx, p, kept, ViaCancel, nil, "")}); ok {
				e.parkEnded(p, kept, store.ParkCancelled)
			}
		}
		return true, nil
	}
	if !e.stream.watched(p.ConversationID) {
		e.unpark(p.ConversationID, p.ID) // held only while someone here watches
	}
	t.cancel()
	return true, nil
}

// showPrompt tells the subscribers a park's prompt; false when the turn
// was cancelled.
func (t *turn) showPrompt(prompt []Event) bool {
	t.emitMu.Lock()
	if t.cancelled.Load() {
		t.emitMu.Unlock()
		return false
	}
	t.shown = true
	for i := range prompt {
		prompt[i].Pos = t.advance(prompt[i].Kind, 0)
	}
	d := t.eng.stream.post(t.session.ConversationID, prompt[0], prompt[1:]...)
	t.emitMu.Unlock()
	d.run()
	return true
}

// submitTool is the generic submit_interaction tool of the conversational
// path: the same validation and payload as the card. When the kind was
// asked by a host tool's Ask, the answer is recorded for it and asker is
// that tool's call, to run again.
func (t *turn) submitTool(call store.ToolCall) (r Result, asker store.ToolCall) {
	var args struct {
		Kind     string          `json:"kind"`
		Values   json.RawMessage `json:"values"`
		Declined bool            `json:"declined"`
	}
	if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil {
		return Result{Text: "invalid arguments: " + err.Error(), IsError: true}, asker
	}
	k, ok := t.eng.cfg.Catalog.Kind(args.Kind)
	if !ok {
		return Result{Text: fmt.Sprintf("unknown interaction kind '%s'", args.Kind), IsError: true}, asker
	}
	if args.Declined {
		r = Result{Text: kindkit.Payload{Status: kindkit.StatusDeclined, Message: kindkit.ConversationDeclinedMsg}.JSON()}
		return r, t.askedBy(args.Kind, r.Text)
	}
	var spec *kindkit.Spec
	if raw, ok := t.state.Stashed[args.Kind]; ok {
		if sp, err := k.LoadSpec(json.RawMessage(raw)); err == nil {
			spec = &sp
		}
	}
	if len(args.Values) == 0 {
		args.Values = json.RawMessage("null")
	}
	values, errs := k.Validate(spec, args.Values)
	if len(errs) > 0 {
		parts := make([]string, len(errs))
		for i, e := range errs {
			parts[i] = e.Field + ": " + e.Message
		}
		return Result{Text: "validation failed — " + strings.Join(parts, "; ") +
			". Re-ask the visitor for the corrected value(s) and submit again", IsError: true}, asker
	}
	t.eng.answered(t.ctx, t.session, args.Kind, values)
	r = Result{Text: kindkit.Submitted(values).JSON()}
	return r, t.askedBy(args.Kind, r.Text)
}

// askedBy hands the payload of a conversational answer to the host tool
// call whose Ask of kind is waiting for it, and returns that call (zero
// when no Ask waits).
func (t *turn) askedBy(kind, payload string) store.ToolCall {
	call, ok := t.state.AskedBy[kind]
	if !ok {
		return store.ToolCall{}
	}
	by := maps.Clone(t.state.AskedBy)
	delete(by, kind)
	t.state.AskedBy = by
	answerAsk(&t.state, call, payload)
	t.state.Pending = t.state.Pending[1:] // it runs now, not from Pending
	return call
}
