package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/kindkit/kindkit/store"
)

// Subscribe has fn told conversation conv's events, in order: first its
// catch-up, then every event of its turns from then on, whoever runs them
// (this process or, on a store that processes share, another: the relay
// carries them), until stop is called or ctx ends. A turn's events are the
// same for every subscriber.
//
// With no from (the zero Position), the catch-up tells the turn in
// progress, if one is: an EventRunning first, then what the turn has said
// so far. That is what this process heard of it, event by event, or else
// what the store kept: a turn that runs in another process, or whose
// process died and that waits to be taken over, is told with its text up
// to its last stored step. A parked turn has no catch-up: its card, and
// the words before it, are in the store (see Rejoin).
//
// With from, the Pos of the last event the subscriber saw, the catch-up is
// every event after it: what the store kept (see Position), then what
// this process heard since of the turn in progress, each once. A from the
// store does not know (another conversation's, or ahead of it) tells what
// comes after it in the store, which may be nothing.
//
// fn is called in order, one event at a time, with no lock of the
// engine held; an engine call that tells an event returns once every
// subscriber here has been told it. So fn must not block, and must not
// call the engine or stop: the call would wait for itself. Once stop
// returns, fn is not called again.
func (e *Engine) Subscribe(ctx context.Context, conv string, from Position, fn func(Event)) (stop func()) {
	sub := &subscription{conv: conv, fn: fn, held: true}
	sub.done.L = &sub.mu
	whole := e.stream.add(sub)
	switch {
	case !from.IsZero():
		evs, err := e.replay(ctx, conv, from)
		if err != nil && ctx.Err() == nil {
			e.log.Error("replay the stream", "err", err)
		}
		sub.resume(evs, from)
	case !whole:
		// Events that come meanwhile wait in the queue, after these.
		sub.prepend(e.owedCatchUp(ctx, conv))
	}
	sub.release()
	if ctx.Done() == nil {
		return func() { e.stream.remove(sub) }
	}
	stopAfter := context.AfterFunc(ctx, func() { e.stream.remove(sub) })
	return func() {
		stopAfter()
		e.stream.remove(sub)
	}
}

// owedCatchUp is the catch-up of conversation conv's turn in progress as
// the store has it, for a subscriber that joins a process that heard
// none of it: the turn runs elsewhere, or waits to be taken over.
func (e *Engine) owedCatchUp(ctx context.Context, conv string) []Event {
	p, err := e.cfg.Store.OwedTurn(ctx, conv)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) && ctx.Err() == nil {
			e.log.Error("load the turn in progress", "err", err)
		}
		return nil
	}
	s, err := stateOf(p)
	if err != nil {
		e.log.Error("read the turn in progress", "err", err)
		return nil
	}
	after := p.ID // a resumed turn's events come after its park
	if p.Type == store.ParkTurn {
		after = ""
	}
	evs := []Event{{Kind: EventRunning, RequestID: s.RequestID, After: after}}
	if s.Text != "" {
		evs = append(evs, Event{Kind: EventText, RequestID: s.RequestID, After: after, Text: s.Text})
	}
	return evs
}

// RelayReady waits until the engine hears its own notes through the
// relay, so that it hears the other processes' too, or ctx ends; at once
// when the store is not shared.
func (e *Engine) RelayReady(ctx context.Context) error { return e.stream.ready(ctx) }

// stream fans the engine's turn events out to the subscribers of their
// conversation: here at once, and, on a store shared between processes,
// in the others through the store's notifier (the relay), which also
// carries the takes of parks and new capabilities. It keeps what the
// running turn of each conversation has said so far, so a subscriber that
// joins mid-turn catches up.
//
// Lock order: see Engine.
type stream struct {
	eng     *Engine
	origin  string         // this engine's name on its notes
	self    []byte         // how this engine's notes begin
	bus     store.Notifier // nil: this process is the only one
	out     chan note      // notes for the bus, sent in order by publish
	dropped atomic.Int64   // notes the full queue refused since the last batch
	stopped chan struct{}  // closed when the relay stopped: nothing is sent any more

	mu     sync.Mutex
	topics map[string]*topic        // conversation id → its subscribers and running turn
	probes map[string]chan struct{} // probe id → closed when the probe came back
	pruned time.Time                // when topics were last pruned
}

// A subscription is told its events by whichever goroutine queued them,
// or by the one telling it already: one at a time, in the order queued,
// with no other lock held.
type subscription struct {
	conv string
	fn   func(Event)

	mu         sync.Mutex // a leaf
	done       sync.Cond  // on mu: told moved, or delivering ended
	queue      []Event
	spare      []Event // the queue's next array
	queued     uint64  // events queued, ever
	told       uint64  // events told, ever
	delivering bool
	gone       bool // removed
	// held: its catch-up is not complete yet. What is queued meanwhile is
	// told by release, after the catch-up, not by whoever queued it.
	held bool
	// caughtUp: how many of the events queued first are add's catch-up.
	caughtUp uint64
	// last is, for a subscription from a position (resume), the position
	// of the last event queued; zero for one without. An event that comes
	// later at or before it was told already, from the store: the relay
	// can be behind the store, so another process's events may reach
	// this one after a replay that read them.
	last Position
}

// enqueue queues ev and chunk, what is shown with it, and returns how many
// events have been queued, ever, for tell.
func (sub *subscription) enqueue(ev Event, chunk []Event) uint64 {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.gone {
		return sub.queued
	}
	if sub.last.IsZero() {
		sub.queue = append(append(sub.queue, ev), chunk...)
		sub.queued += uint64(1 + len(chunk))
		return sub.queued
	}
	sub.queueAfterLocked(ev)
	for _, c := range chunk {
		sub.queueAfterLocked(c)
	}
	return sub.queued
}

// queueAfterLocked queues ev unless it comes at or before sub.last (a
// text run without the bytes told), and moves sub.last to it.
func (sub *subscription) queueAfterLocked(ev Event) {
	if !ev.Pos.IsZero() {
		var ok bool
		if ev, ok = trimmed(ev, sub.last); !ok {
			return
		}
		sub.last = ev.Pos
	}
	sub.queue = append(sub.queue, ev)
	sub.queued++
}

// tell returns once the first upTo events queued have been told (or sub
// was removed): it tells them itself, unless another goroutine is at it,
// which it then waits for.
func (sub *subscription) tell(upTo uint64) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	for sub.told < upTo && !sub.gone && !sub.held {
		if sub.delivering {
			sub.done.Wait()
			continue
		}
		sub.delivering = true
		for len(sub.queue) > 0 && !sub.gone {
			batch := sub.queue
			sub.queue = sub.spare
			sub.mu.Unlock()
			for _, ev := range batch {
				sub.fn(ev)
			}
			sub.mu.Lock()
			sub.told += uint64(len(batch))
			clear(batch)
			sub.spare = batch[:0]
		}
		sub.delivering = false
		sub.done.Broadcast()
	}
}

// prepend queues evs before what sub has queued, while it is held.
func (sub *subscription) prepend(evs []Event) {
	if len(evs) == 0 {
		return
	}
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if !sub.gone {
		sub.queue = append(evs, sub.queue...)
		sub.queued += uint64(len(evs))
	}
}

// resume puts replayed, the events after from that the store kept,
// before what sub has queued, while it is held: of that, only what comes
// after them is kept, and of the catch-up add queued, only what has a
// position (an EventRunning is news to no one who passes a position).
func (sub *subscription) resume(replayed []Event, from Position) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.gone {
		return
	}
	last := from
	if n := len(replayed); n > 0 && replayed[n-1].Pos.after(last) {
		last = replayed[n-1].Pos
	}
	queue := replayed
	for i, ev := range sub.queue {
		if ev.Pos.IsZero() {
			if uint64(i) >= sub.caughtUp {
				queue = append(queue, ev) // news without a position: told live only
			}
			continue
		}
		if ev, ok := trimmed(ev, last); ok {
			queue = append(queue, ev)
			last = ev.Pos
		}
	}
	sub.queue = queue
	sub.queued = uint64(len(queue)) // nothing was told: it is held
	sub.last = last
}

// release ends sub's hold and tells what is queued.
func (sub *subscription) release() {
	sub.mu.Lock()
	sub.held = false
	upTo := sub.queued
	sub.mu.Unlock()
	sub.tell(upTo)
}

// end stops sub's events and waits for the one being told.
func (sub *subscription) end() {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	sub.gone = true
	sub.queue, sub.spare = nil, nil
	for sub.delivering {
		sub.done.Wait()
	}
}

// A delivery is events queued to subscribers: run tells them, with no
// lock of the engine held. A conversation mostly has one subscriber here:
// it needs no slice.
type delivery struct {
	first queued
	more  []queued
}

type queued struct {
	sub  *subscription
	upTo uint64
}

func (d *delivery) add(q queued) {
	if d.first.sub == nil {
		d.first = q
	} else {
		d.more = append(d.more, q)
	}
}

func (d delivery) run() {
	if d.first.sub != nil {
		d.first.sub.tell(d.first.upTo)
	}
	for _, q := range d.more {
		q.sub.tell(q.upTo)
	}
}

// A topic is one conversation's subscribers here and what its running
// turn has said so far.
type topic struct {
	subs    map[*subscription]struct{}
	live    []said    // the running turn's events; nil when none runs
	size    int       // about the bytes of live
	dropped bool      // live outgrew its bounds; the catch-up is cut
	heard   time.Time // its last event
	// ended is closed when live ends (the turn's terminal event or its
	// park's prompt is heard), for caughtUp; nil while nobody waits.
	ended chan struct{}
	// made: the conversation was made here and nothing of it was heard
	// since, so no turn of it is in progress: a subscriber's catch-up
	// needs no read of the store.
	made bool
}

// said is one event of a running turn, with a run of its tokens kept as
// one text, so that a long reply is one event.
type said struct {
	ev     Event
	tokens []byte // an EventText's run
}

// A note is a turn's event, or a take, as it travels between processes.
type note struct {
	Origin       string      `json:"o"` // first: see receive
	Conversation string      `json:"c"`
	Event        *wireEvent  `json:"e,omitempty"`
	Chunk        []wireEvent `json:"x,omitempty"` // what a prompt shows with it
	Taken        string      `json:"p,omitempty"` // a park taken by the origin
	Probe        string      `json:"q,omitempty"` // a note the origin waits to hear itself
	Declared     bool        `json:"d,omitempty"` // the conversation's capabilities were declared anew
	Cancel       string      `json:"s,omitempty"` // a turn to stop where it runs (Engine.Cancel)
	// flushed marks a flush in the queue, and is never sent: it is closed
	// once the notes queued before it were handed to the bus.
	flushed chan struct{}
}

// wireEvent is an Event as the relay carries it: the park without the
// engine's state of its turn, which only the store needs.
type wireEvent struct {
	Kind      EventKind       `json:"k"`
	RequestID string          `json:"r,omitempty"`
	After     string          `json:"b,omitempty"`
	Text      string          `json:"t,omitempty"`
	Call      *store.ToolCall `json:"l,omitempty"`
	IsError   bool            `json:"i,omitempty"`
	Park      *store.Park     `json:"a,omitempty"`
	Reply     *Reply          `json:"y,omitempty"`
	Message   *store.Message  `json:"m,omitempty"`
	Seq       int64           `json:"s,omitempty"` // Pos
	Off       int64           `json:"f,omitempty"`
}

func toWire(ev Event) wireEvent {
	w := wireEvent{Kind: ev.Kind, RequestID: ev.RequestID, After: ev.After, Text: ev.Text, IsError: ev.IsError, Reply: ev.Reply, Message: ev.Message,
		Seq: ev.Pos.seq, Off: ev.Pos.off}
	if ev.Call != (store.ToolCall{}) {
		call := ev.Call
		w.Call = &call
	}
	if ev.Park != nil {
		p := *ev.Park
		p.Turn, p.LeaseOwner, p.LeaseUntil = nil, "", time.Time{}
		w.Park = &p
	}
	return w
}

func (w *wireEvent) event() Event {
	if p := w.Park; p != nil {
		// What was nil comes as null.
		p.Turn = nil
		if string(p.Outcome) == "null" {
			p.Outcome = nil
		}
		if string(p.Record) == "null" {
			p.Record = nil
		}
	}
	ev := Event{Kind: w.Kind, RequestID: w.RequestID, After: w.After, Text: w.Text, IsError: w.IsError, Park: w.Park, Reply: w.Reply, Message: w.Message,
		Pos: Position{seq: w.Seq, off: w.Off}}
	if w.Call != nil {
		ev.Call = *w.Call
	}
	return ev
}

// valid tells whether an event from elsewhere is one this engine could
// have told: what a subscriber reads of it is there.
func (w *wireEvent) valid() bool {
	if w.Seq < 0 || w.Off < 0 || w.Off > endOfSegment {
		return false
	}
	switch w.Kind {
	case EventText, EventToolCall, EventToolResult, EventFailed, EventCancelled:
		return true
	case EventPrompt:
		return w.Park != nil
	case EventReply:
		return w.Reply != nil
	case EventMessage:
		return w.Message != nil
	}
	return false
}

const (
	replyRoom     = 256 // bytes a run of tokens starts with
	maxLiveEvents = 256
	maxLiveBytes  = 1 << 20
	busQueue      = 4096 // notes waiting for the bus before new ones are dropped
	// A turn that starts waits at most this long for the relay to bring
	// what another process told before it (stream.caughtUp).
	relayCatchUp = 5 * time.Second
	// A turn whose end this process never heard (its notes were lost while
	// the bus was down) is forgotten after topicIdle without a subscriber.
	topicIdle = 10 * time.Minute
)

func newStream(e *Engine, bus store.Notifier) *stream {
	origin := uuid.NewString()
	s := &stream{eng: e, origin: origin, self: []byte(`{"o":"` + origin + `"`), bus: bus, topics: map[string]*topic{}, probes: map[string]chan struct{}{},
		stopped: make(chan struct{})}
	if bus != nil {
		s.out = make(chan note, busQueue)
	}
	return s
}

// run carries notes to and from the bus until ctx ends.
func (s *stream) run(ctx context.Context) {
	defer close(s.stopped)
	if s.bus == nil {
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { s.publish(ctx) })
	wg.Go(func() { s.listen(ctx) })
	wg.Wait()
}

// listen listens to the bus until ctx ends, again after each failure.
func (s *stream) listen(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for {
		started := time.Now()
		err := s.bus.Listen(ctx, s.receive)
		if ctx.Err() != nil {
			return
		}
		if time.Since(started) > time.Minute {
			backoff = 100 * time.Millisecond
		}
		s.eng.log.Warn("relay: listening to other processes failed; listening again", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// publish sends queued notes in order, as many as are waiting at once,
// with each run of one turn's tokens as one note.
func (s *stream) publish(ctx context.Context) {
	for {
		var batch []note
		var flushes []chan struct{} // closed once the batch is handed to the bus
		add := func(n note) {
			if n.flushed != nil {
				flushes = append(flushes, n.flushed)
				return
			}
			if len(batch) > 0 {
				if last := &batch[len(batch)-1]; n.isToken() && last.isToken() && n.Conversation == last.Conversation &&
					n.Event.RequestID == last.Event.RequestID && n.Event.After == last.Event.After {
					last.Event.Text += n.Event.Text
					last.Event.Seq, last.Event.Off = n.Event.Seq, n.Event.Off // the run's end
					return
				}
			}
			batch = append(batch, n)
		}
		select {
		case <-ctx.Done():
			return
		case n := <-s.out:
			add(n)
		}
		for more := true; more && len(batch) < 256; {
			select {
			case n := <-s.out:
				add(n)
			default:
				more = false
			}
		}
		if n := s.dropped.Swap(0); n > 0 {
			s.eng.log.Warn("relay: the bus was behind; notes to other processes were dropped", "notes", n)
		}
		msgs := make([][]byte, 0, len(batch))
		for _, n := range batch {
			data, err := json.Marshal(n)
			if err != nil {
				s.eng.log.Error("relay: encode note", "err", err)
				continue
			}
			msgs = append(msgs, data)
		}
		if len(msgs) > 0 {
			sendCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
			if err := s.bus.Notify(sendCtx, msgs...); err != nil && ctx.Err() == nil {
				s.eng.log.Warn("relay: notes to other processes lost", "notes", len(msgs), "err", err)
			}
			cancel()
		}
		for _, done := range flushes {
			close(done)
		}
	}
}

// flush waits until the notes queued so far were handed to the bus (sent,
// or lost as the log says), or ctx ends, or the relay stopped.
func (s *stream) flush(ctx context.Context) {
	if s.bus == nil {
		return
	}
	done := make(chan struct{})
	select {
	case s.out <- note{flushed: done}:
	default:
		return // the queue is full: notes are dropped already
	}
	select {
	case <-done:
	case <-ctx.Done():
	case <-s.stopped:
	}
}

// caughtUp waits until this process has heard what the others told of
// conversation conv before a turn of it that starts here, so that the
// subscribers here are told that turn after the one that ran elsewhere,
// not before that one's end, still on its way: first every note the
// others sent before now (the relay delivers them in the order sent, and
// a run sends what it told before it runs: turn.run), then the end of
// the turn they ran, when it began and did not end. Only while someone
// here subscribes to conv, and for at most wait: a note the relay lost
// (the log says so) holds a turn no longer.
func (s *stream) caughtUp(ctx context.Context, conv string, wait time.Duration) {
	if s.bus == nil || !s.watched(conv) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	// One probe: the engine listens, and a probe sent again would only
	// lengthen a relay that is behind.
	err := s.probe(ctx, nil)
	for err == nil {
		s.mu.Lock()
		tp := s.topics[conv]
		if tp == nil || tp.live == nil {
			s.mu.Unlock()
			return
		}
		if tp.ended == nil {
			tp.ended = make(chan struct{})
		}
		ended := tp.ended
		s.mu.Unlock()
		select {
		case <-ended:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	s.eng.log.Warn("relay: the other processes were not heard up to now; a turn of theirs may be told after this one's events",
		"conversationId", conv, "err", err)
}

func (n *note) isToken() bool {
	return n.Event != nil && n.Event.Kind == EventText && len(n.Chunk) == 0
}

func (s *stream) send(n note) {
	if s.bus == nil {
		return
	}
	n.Origin = s.origin
	select {
	case s.out <- n:
	default:
		s.dropped.Add(1) // counted, and logged once the bus takes notes again
	}
}

// receive handles a note from the bus. This engine's own notes come back
// too: they are told apart by their first bytes (Origin is the first
// field), not decoded, unless they may be a probe.
func (s *stream) receive(data []byte) {
	if bytes.HasPrefix(data, s.self) && !bytes.Contains(data, []byte(`"q":`)) {
		return
	}
	var n note
	if err := json.Unmarshal(data, &n); err != nil || n.Conversation == "" {
		s.eng.log.Warn("relay: bad note", "bytes", len(data))
		return
	}
	if n.Origin == s.origin {
		if n.Probe != "" {
			s.mu.Lock()
			if done, ok := s.probes[n.Probe]; ok {
				close(done)
				delete(s.probes, n.Probe)
			}
			s.mu.Unlock()
		}
		return
	}
	switch {
	case n.Probe != "":
	case n.Taken != "":
		s.eng.unpark(n.Conversation, n.Taken)
	case n.Declared:
		s.eng.capabilitiesChanged(n.Conversation)
	case n.Cancel != "":
		if t := s.eng.find(n.Conversation, n.Cancel); t != nil {
			s.eng.cancel(context.Background(), t)
		}
	case n.Event != nil && n.Event.valid():
		var chunk []Event
		for i := range n.Chunk {
			if n.Chunk[i].valid() {
				chunk = append(chunk, n.Chunk[i].event())
			}
		}
		s.queue(n.Conversation, n.Event.event(), chunk).run()
	default:
		s.eng.log.Warn("relay: bad note", "bytes", len(data))
	}
}

// ready waits until this engine hears its own notes through the bus.
func (s *stream) ready(ctx context.Context) error {
	// Again every 100ms: a probe sent before the engine listens is lost.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	return s.probe(ctx, tick.C)
}

// probe sends a probe, again each time again ticks, until this engine
// hears one (and so every note sent before it), or ctx ends.
func (s *stream) probe(ctx context.Context, again <-chan time.Time) error {
	if s.bus == nil {
		return nil
	}
	id, done := uuid.NewString(), make(chan struct{})
	s.mu.Lock()
	s.probes[id] = done
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.probes, id)
		s.mu.Unlock()
	}()
	for {
		s.send(note{Conversation: "-", Probe: id})
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-again:
		}
	}
}

// post queues an event of a turn of conversation conv (a prompt with the
// events shown with it) for the subscribers here, whom the delivery tells,
// and sends it to the other processes.
func (s *stream) post(conv string, ev Event, chunk ...Event) delivery {
	d := s.queue(conv, ev, chunk)
	if s.bus != nil {
		w := toWire(ev)
		n := note{Conversation: conv, Event: &w}
		for _, c := range chunk {
			n.Chunk = append(n.Chunk, toWire(c))
		}
		s.send(n)
	}
	return d
}

// declared tells the other processes that conversation conv's
// capabilities were declared anew here.
func (s *stream) declared(conv string) { s.send(note{Conversation: conv, Declared: true}) }

// cancel asks the other processes to stop turn requestID of conv.
func (s *stream) cancel(conv, requestID string) { s.send(note{Conversation: conv, Cancel: requestID}) }

// taken tells the other processes that park id of conv was taken here.
func (s *stream) taken(conv, id string) { s.send(note{Conversation: conv, Taken: id}) }

// queue queues an event (and what is shown with it) for conv's
// subscribers here, and keeps it for the catch-up.
func (s *stream) queue(conv string, ev Event, chunk []Event) delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	tp := s.topicLocked(conv)
	tp.keep(ev)
	tp.made = false
	now := time.Now()
	tp.heard = now
	if now.Sub(s.pruned) > time.Minute {
		s.pruneLocked(now)
	}
	if len(tp.subs) == 0 && tp.live == nil {
		delete(s.topics, conv)
	}
	var d delivery
	for sub := range tp.subs {
		d.add(queued{sub, sub.enqueue(ev, chunk)})
	}
	return d
}

// watched tells whether conversation conv has subscribers here.
func (s *stream) watched(conv string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	tp := s.topics[conv]
	return tp != nil && len(tp.subs) > 0
}

// topicLocked is conversation conv's topic, made when it has none.
func (s *stream) topicLocked(conv string) *topic {
	tp := s.topics[conv]
	if tp == nil {
		tp = &topic{subs: map[*subscription]struct{}{}}
		s.topics[conv] = tp
	}
	return tp
}

// pruneLocked forgets the topics nobody subscribes to whose turn went
// quiet.
func (s *stream) pruneLocked(now time.Time) {
	for conv, tp := range s.topics {
		if len(tp.subs) == 0 && now.Sub(tp.heard) > topicIdle {
			delete(s.topics, conv)
		}
	}
	s.pruned = now
}

// keep records an event of the running turn for the catch-up. A turn that
// ends or parks leaves nothing to catch up on: a parked turn's card is in
// the store (Engine.Rejoin shows it again).
func (tp *topic) keep(ev Event) {
	switch ev.Kind {
	case EventPrompt, EventReply, EventFailed, EventCancelled:
		tp.live, tp.size, tp.dropped = nil, 0, false
		if tp.ended != nil {
			close(tp.ended)
			tp.ended = nil
		}
		return
	}
	if tp.dropped {
		return
	}
	i := len(tp.live) - 1
	switch {
	case ev.Kind == EventText && i >= 0 && tp.live[i].ev.Kind == EventText &&
		tp.live[i].ev.RequestID == ev.RequestID && tp.live[i].ev.After == ev.After:
		tp.live[i].tokens = append(tp.live[i].tokens, ev.Text...)
		tp.live[i].ev.Pos = ev.Pos // the run's end
		tp.size += len(ev.Text)
	case ev.Kind == EventText:
		// Room for a short reply at once: grown from a token's few bytes,
		// the run took an allocation for every doubling.
		tokens := append(make([]byte, 0, max(replyRoom, len(ev.Text))), ev.Text...)
		ev.Text = ""
		tp.live = append(tp.live, said{ev: ev, tokens: tokens})
		tp.size += len(tokens)
	default:
		tp.live = append(tp.live, said{ev: ev})
		tp.size += eventBytes(&ev)
	}
	if len(tp.live) > maxLiveEvents || tp.size > maxLiveBytes {
		tp.live, tp.size, tp.dropped = []said{}, 0, true
	}
}

// eventBytes is about the size of ev, for the catch-up's bound.
func eventBytes(ev *Event) int {
	n := 256 + len(ev.Text) + len(ev.Call.Arguments)
	if ev.Message != nil {
		n += len(ev.Message.Text)
	}
	return n
}

// made notes that conversation conv was just made here.
func (s *stream) made(conv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tp := s.topicLocked(conv)
	tp.made, tp.heard = true, time.Now() // kept topicIdle for its first subscriber
}

// add subscribes sub with the catch-up of what this process heard of the
// turn in progress queued, and tells whether that is the whole catch-up:
// it heard the turn, or the conversation is new (made).
func (s *stream) add(sub *subscription) (whole bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tp := s.topicLocked(sub.conv)
	if len(tp.live) > 0 {
		first := tp.live[0].ev
		sub.queue = append(sub.queue, Event{Kind: EventRunning, RequestID: first.RequestID, After: first.After})
	}
	for i := range tp.live {
		ev := tp.live[i].ev
		if ev.Kind == EventText {
			ev.Text = string(tp.live[i].tokens)
		}
		sub.queue = append(sub.queue, ev)
	}
	sub.queued = uint64(len(sub.queue))
	sub.caughtUp = sub.queued
	tp.subs[sub] = struct{}{}
	return len(tp.live) > 0 || tp.made
}

// remove ends sub; once it returns, sub's function is not called again.
// A conversation nobody here subscribes to any more has its parked turn
// let go: a resume reads it from the store.
func (s *stream) remove(sub *subscription) {
	sub.end()
	s.mu.Lock()
	tp := s.topics[sub.conv]
	if tp == nil {
		s.mu.Unlock()
		return
	}
	delete(tp.subs, sub)
	last := len(tp.subs) == 0
	if last && tp.live == nil {
		delete(s.topics, sub.conv)
	}
	s.mu.Unlock()
	if last {
		s.eng.letGoParked(sub.conv)
	}
}
