package server

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/store"
)

// hub fans a conversation's turn events out to every socket with a session
// on it (its watchers): the turn's follower hears them from the engine, the
// other watchers here from the hub, and, on a store shared between
// processes, the watchers of the other processes through the store's
// notifier. It also keeps what the running turn of each conversation has
// said so far, so a socket that joins mid-turn catches up.
//
// It is the engine's agent.Observer. Lock order: a turn's, then h.mu, then
// a conn's c.mu. A person's message (agent.EventMessage) goes only to the
// sockets that asked for it (ExtUserMessages).
type hub struct {
	srv     *Server
	origin  string         // this process's name on its notes
	self    []byte         // how this process's notes begin
	bus     store.Notifier // nil: this process is the only one
	out     chan note      // notes for the bus, sent in order by publish
	dropped atomic.Int64   // notes the full queue refused since the last batch

	mu     sync.Mutex
	topics map[string]*topic        // conversation id → its watchers and running turn
	probes map[string]chan struct{} // probe id → closed when the probe came back
	pruned time.Time                // when topics were last pruned
}

// A topic is one conversation's watchers here and what its running turn
// has said so far.
type topic struct {
	watchers map[*conn]*watcher
	live     []said    // the running turn's frames; nil when none runs
	size     int       // bytes in live
	dropped  bool      // live outgrew its bounds; the catch-up is cut
	heard    time.Time // its last event
}

// A watcher is a socket's watch of a conversation. It starts held: from
// before the socket's join is acknowledged until the card it is shown, if
// any, is out, what it is to hear waits in held, so nothing that happens
// in between is lost or comes before the ack. A socket shown a card as it
// joined (Engine.Reattach) may still get notes of the run of the turn that
// raised it, from another process, which were on their way: they are not
// news to it, unlike what comes after the card.
type watcher struct {
	open    bool
	held    []heldFrame
	shown   string // the park it was shown, until news reaches it
	request string // the shown park's turn
}

type heldFrame struct {
	frame   []byte
	n       *note  // nil for the catch-up
	request string // the catch-up's turn
}

// said is one frame of a running turn: a run of tokens, kept as text so a
// long reply is one frame, or an event, encoded (frame) or not yet (ev).
type said struct {
	requestID string
	tokens    []byte
	frame     []byte
	ev        *agent.Event
	message   bool // the person's message (user_message), for the sockets that asked for it
}

func (s *said) isTokens() bool { return s.frame == nil && s.ev == nil }

// A note is a turn event or a take, as it travels between processes.
type note struct {
	Origin       string          `json:"o"`
	Conversation string          `json:"c"`
	Kind         agent.EventKind `json:"k,omitempty"`
	RequestID    string          `json:"r,omitempty"`
	Park         string          `json:"a,omitempty"` // a prompt's park
	After        string          `json:"b,omitempty"` // see agent.Event.After
	Token        string          `json:"t,omitempty"`
	Frame        json.RawMessage `json:"f,omitempty"`
	Chunk        json.RawMessage `json:"x,omitempty"` // a prompt's call chunk, which follows it
	Taken        string          `json:"p,omitempty"` // a park taken by the origin
	Probe        string          `json:"q,omitempty"` // a note the origin waits to hear itself
	Declared     bool            `json:"d,omitempty"` // the conversation's capabilities were declared anew

	// A turn's event here (local) and a prompt's call chunk, for Frame and
	// Chunk: encoded only when someone is to hear them (encodeFrames),
	// which is seldom without a bus. A note from elsewhere has neither.
	event agent.Event
	chunk []agent.Event
	local bool
}

// encodeFrames encodes n's event and chunk into Frame and Chunk, once.
func (n *note) encodeFrames() error {
	if n.Frame != nil || n.Kind == agent.EventText || !n.local {
		return nil
	}
	fe := frameFor(n.event)
	frame, err := fe.encode()
	if err != nil {
		return err
	}
	n.Frame = frame
	for _, e := range n.chunk {
		if e.Kind == agent.EventText {
			continue
		}
		fe := frameFor(e)
		if n.Chunk, err = fe.encode(); err != nil {
			return err
		}
	}
	return nil
}

const (
	replyRoom     = 256 // bytes a run of tokens starts with
	maxLiveFrames = 256
	maxLiveBytes  = 1 << 20
	busQueue      = 4096 // notes waiting for the bus before new ones are dropped
	// A turn whose end this process never heard (its notes were lost while
	// the bus was down) is forgotten after topicIdle without a watcher.
	topicIdle = 10 * time.Minute
)

var _ agent.Observer = (*hub)(nil)

func newHub(s *Server, bus store.Notifier) *hub {
	origin := uuid.NewString()
	h := &hub{srv: s, origin: origin, self: []byte(`{"o":"` + origin + `"`), bus: bus, topics: map[string]*topic{}, probes: map[string]chan struct{}{}}
	if bus != nil {
		h.out = make(chan note, busQueue)
	}
	return h
}

// run carries notes to and from the bus until ctx ends.
func (h *hub) run(ctx context.Context) {
	if h.bus == nil {
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { h.publish(ctx) })
	wg.Go(func() { h.listen(ctx) })
	wg.Wait()
}

// listen listens to the bus until ctx ends, again after each failure.
func (h *hub) listen(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for {
		started := time.Now()
		err := h.bus.Listen(ctx, h.receive)
		if ctx.Err() != nil {
			return
		}
		if time.Since(started) > time.Minute {
			backoff = 100 * time.Millisecond
		}
		h.srv.log.Warn("fan-out: listening to other processes failed; listening again", "err", err, "in", backoff)
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
func (h *hub) publish(ctx context.Context) {
	for {
		var batch []note
		select {
		case <-ctx.Done():
			return
		case n := <-h.out:
			batch = append(batch, n)
		}
		for more := true; more && len(batch) < 256; {
			select {
			case n := <-h.out:
				if last := &batch[len(batch)-1]; n.isToken() && last.isToken() && n.Conversation == last.Conversation &&
					n.RequestID == last.RequestID && n.After == last.After {
					last.Token += n.Token
				} else {
					batch = append(batch, n)
				}
			default:
				more = false
			}
		}
		if n := h.dropped.Swap(0); n > 0 {
			h.srv.log.Warn("fan-out: the bus was behind; notes to other processes were dropped", "notes", n)
		}
		msgs := make([][]byte, 0, len(batch))
		for _, n := range batch {
			data, err := json.Marshal(n)
			if err != nil {
				h.srv.log.Error("fan-out: encode note", "err", err)
				continue
			}
			msgs = append(msgs, data)
		}
		sendCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := h.bus.Notify(sendCtx, msgs...); err != nil && ctx.Err() == nil {
			h.srv.log.Warn("fan-out: notes to other processes lost", "notes", len(msgs), "err", err)
		}
		cancel()
	}
}

func (n *note) isToken() bool {
	return n.Kind == agent.EventText && n.Frame == nil && n.Taken == "" && n.Probe == "" && !n.Declared
}

func (h *hub) send(n note) {
	if h.bus == nil {
		return
	}
	n.Origin = h.origin
	select {
	case h.out <- n:
	default:
		h.dropped.Add(1) // counted, and logged once the bus takes notes again
	}
}

// receive handles a note from the bus. This process's own notes come back
// too: they are told apart by their first bytes (Origin is the first
// field), not decoded, unless they may be a probe.
func (h *hub) receive(data []byte) {
	if bytes.HasPrefix(data, h.self) && !bytes.Contains(data, []byte(`"q":`)) {
		return
	}
	var n note
	if err := json.Unmarshal(data, &n); err != nil || n.Conversation == "" {
		h.srv.log.Warn("fan-out: bad note", "bytes", len(data))
		return
	}
	if n.Origin == h.origin {
		if n.Probe != "" {
			h.mu.Lock()
			if done, ok := h.probes[n.Probe]; ok {
				close(done)
				delete(h.probes, n.Probe)
			}
			h.mu.Unlock()
		}
		return
	}
	switch {
	case n.Probe != "":
		return
	case n.Taken != "":
		h.srv.engine.ReleasePark(n.Taken)
		return
	case n.Declared:
		h.srv.engine.CapabilitiesChanged(n.Conversation)
		return
	}
	h.deliver(n.Conversation, nil, n)
}

// ready waits until this process hears its own notes through the bus.
func (h *hub) ready(ctx context.Context) error {
	if h.bus == nil {
		return nil
	}
	id, done := uuid.NewString(), make(chan struct{})
	h.mu.Lock()
	h.probes[id] = done
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.probes, id)
		h.mu.Unlock()
	}()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		h.send(note{Conversation: "-", Probe: id})
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// TurnEvent shows a turn's event (or a prompt and its call chunk, shown
// together) to the conversation's watchers other than f, here and in the
// other processes.
func (h *hub) TurnEvent(conv string, f agent.Follower, ev agent.Event, chunk ...agent.Event) {
	n := note{Conversation: conv, Kind: ev.Kind, RequestID: ev.RequestID, Token: ev.Text, After: ev.After, event: ev, chunk: chunk, local: true}
	if ev.Park != nil {
		n.Park = ev.Park.ID
	}
	if h.bus != nil {
		// The other processes hear every event: encoded here, outside
		// h.mu. Without them, mostly only the turn's own socket does,
		// which encodes its own.
		if err := n.encodeFrames(); err != nil {
			h.srv.log.Error("fan-out: encode event", "err", err)
			return
		}
	}
	h.deliver(conv, f, n)
	h.send(n)
}

// CapabilitiesChanged tells the other processes that conversation conv's
// capabilities were declared anew here (Engine.SetSupports).
func (h *hub) CapabilitiesChanged(conv string) {
	h.send(note{Conversation: conv, Declared: true})
}

// ParkTaken tells the other processes that a park was taken here.
func (h *hub) ParkTaken(conv, id string) {
	h.send(note{Conversation: conv, Taken: id})
}

// deliver gives one event of a turn (a token when it has no frame) to the
// conversation's watchers here other than f, and keeps it for the catch-up.
func (h *hub) deliver(conv string, f agent.Follower, n note) {
	h.mu.Lock()
	defer h.mu.Unlock()
	tp := h.topicLocked(conv)
	tp.keep(n)
	now := time.Now()
	tp.heard = now
	if now.Sub(h.pruned) > time.Minute {
		h.pruneLocked(now)
	}
	var frame []byte
	var held *note // a copy, made only when a watcher holds it: n stays on the stack
	for c, w := range tp.watchers {
		if agent.Follower(c) == f || (n.Kind == agent.EventMessage && !c.asked(extUserMessages)) {
			continue
		}
		if frame == nil {
			if n.Kind == agent.EventText {
				frame = tokenEvent(n.RequestID, n.Token).raw
			} else if err := n.encodeFrames(); err != nil {
				h.srv.log.Error("fan-out: encode event", "err", err)
				return
			} else if frame = n.Frame; frame == nil {
				return // a note from elsewhere with neither a token nor a frame
			}
		}
		if !w.open {
			if held == nil {
				cp := n
				held = &cp
			}
			w.held = append(w.held, heldFrame{frame: frame, n: held})
			if n.Chunk != nil {
				w.held = append(w.held, heldFrame{frame: n.Chunk, n: held})
			}
			continue
		}
		if w.old(n) {
			continue
		}
		c.sendFrame(frame)
		if n.Chunk != nil {
			c.sendFrame(n.Chunk)
		}
	}
	if len(tp.watchers) == 0 && tp.live == nil {
		delete(h.topics, conv)
	}
}

// topicLocked is conversation conv's topic, made when it has none.
func (h *hub) topicLocked(conv string) *topic {
	tp := h.topics[conv]
	if tp == nil {
		tp = &topic{watchers: map[*conn]*watcher{}}
		h.topics[conv] = tp
	}
	return tp
}

// pruneLocked forgets the topics nobody watches whose turn went quiet.
func (h *hub) pruneLocked(now time.Time) {
	for conv, tp := range h.topics {
		if len(tp.watchers) == 0 && now.Sub(tp.heard) > topicIdle {
			delete(h.topics, conv)
		}
	}
	h.pruned = now
}

// old tells whether n is of the run of the turn that raised the card w
// was shown on joining.
func (w *watcher) old(n note) bool {
	if w.shown == "" {
		return false
	}
	if n.RequestID == w.request && n.After != w.shown {
		return true
	}
	w.shown = ""
	return false
}

// keep records an event of the running turn for the catch-up. A turn that
// ends or parks leaves nothing to catch up on: a parked turn's card is
// shown again by the resume (Engine.Reattach).
func (tp *topic) keep(n note) {
	switch n.Kind {
	case agent.EventPrompt, agent.EventReply, agent.EventFailed, agent.EventCancelled:
		tp.live, tp.size, tp.dropped = nil, 0, false
		return
	}
	if tp.dropped {
		return
	}
	i := len(tp.live) - 1
	switch {
	case n.Kind == agent.EventText && i >= 0 && tp.live[i].isTokens() && tp.live[i].requestID == n.RequestID:
		tp.live[i].tokens = append(tp.live[i].tokens, n.Token...)
	case n.Kind == agent.EventText:
		// Room for a short reply at once: grown from a token's few bytes,
		// the run took an allocation for every doubling.
		tokens := append(make([]byte, 0, max(replyRoom, len(n.Token))), n.Token...)
		tp.live = append(tp.live, said{requestID: n.RequestID, tokens: tokens})
	case n.Frame != nil:
		tp.live = append(tp.live, said{requestID: n.RequestID, frame: n.Frame, message: n.Kind == agent.EventMessage})
	case n.local:
		ev := n.event
		tp.live = append(tp.live, said{requestID: n.RequestID, ev: &ev, message: n.Kind == agent.EventMessage})
	}
	tp.size += len(n.Token) + len(n.Frame)
	if n.Frame == nil && n.local {
		tp.size += eventBytes(&n.event) // about what its frame will be
	}
	if len(tp.live) > maxLiveFrames || tp.size > maxLiveBytes {
		tp.live, tp.size, tp.dropped = []said{}, 0, true
	}
}

// eventBytes is about the size of ev's frame, for the catch-up's bound.
func eventBytes(ev *agent.Event) int {
	return 256 + len(ev.Text) + len(ev.Call.Arguments)
}

// watch makes c a held watcher of conversation conv, holding first what
// the turn that runs there, if any, has said so far (its catch-up).
func (h *hub) watch(c *conn, conv string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	tp := h.topicLocked(conv)
	if _, ok := tp.watchers[c]; ok {
		return
	}
	w := &watcher{}
	for i := range tp.live {
		s := &tp.live[i]
		if s.message && !c.asked(extUserMessages) {
			continue
		}
		frame := s.frame
		switch {
		case s.ev != nil:
			fe := frameFor(*s.ev)
			var err error
			if frame, err = fe.encode(); err != nil {
				h.srv.log.Error("fan-out: encode event", "err", err)
				continue
			}
		case frame == nil:
			frame = tokenEvent(s.requestID, string(s.tokens)).raw
		}
		w.held = append(w.held, heldFrame{frame: frame, request: s.requestID})
	}
	tp.watchers[c] = w
}

// open sends c what its watch of conv held, and from then on what comes,
// now that its join is acknowledged and the card of park shown (nil: none)
// is out.
func (h *hub) open(c *conn, conv string, shown *agent.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	tp := h.topics[conv]
	if tp == nil || tp.watchers[c] == nil || tp.watchers[c].open {
		return
	}
	w := tp.watchers[c]
	if shown != nil {
		w.shown, w.request = shown.Park.ID, shown.RequestID
	}
	for _, hf := range w.held {
		switch {
		case hf.n == nil && shown != nil && hf.request == w.request:
			// A catch-up of the run that raised the card shown: that run
			// parked (its prompt's note had not come yet when the watch
			// began, on another process), and the card is what is left.
		case hf.n == nil || !w.old(*hf.n):
			c.sendFrame(hf.frame)
		}
	}
	w.open, w.held = true, nil
}

// unwatch ends c's watch of conv.
func (h *hub) unwatch(c *conn, conv string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	tp := h.topics[conv]
	if tp == nil {
		return
	}
	delete(tp.watchers, c)
	if len(tp.watchers) == 0 && tp.live == nil {
		delete(h.topics, conv)
	}
}
