package server

import (
	"context"
	"slices"
	"sync"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/store"
)

// A watch is a socket's subscription to a conversation's events
// (Engine.Subscribe): every socket with a session on the conversation
// sees its turns, whoever runs them, here or in another process, and
// follows its own turn by them (conn.hear).
//
// A watch starts held: from before the socket's join is acknowledged until
// the card it is shown, if any, is out, what comes waits in held, so
// nothing that happens in between is lost or comes before the ack. A
// socket shown a card as it joined (Engine.Rejoin) may still get events
// of the run of the turn that raised it, from another process, which were
// on their way: they are not news to it, unlike what comes after the card.
//
// Lock order: w.mu, then the conn's c.mu. The socket calls the engine
// holding neither: the engine's call may wait for this watch to be told.
type watch struct {
	c    *conn
	conv string
	stop func()

	mu      sync.Mutex
	open    bool
	held    []agent.Event
	shown   []string // the parks it was shown, until news reaches it
	request string   // the shown parks' turn
}

// watch has the connection follow conversation conv's turns, whoever runs
// them; what comes is held until the connection opens the watch.
func (c *conn) watch(conv string) {
	if c.watching[conv] != nil {
		return
	}
	if c.watching == nil {
		c.watching = map[string]*watch{}
	}
	w := &watch{c: c, conv: conv}
	c.watching[conv] = w
	w.stop = c.srv.engine.Subscribe(context.Background(), conv, agent.Position{}, w.hear)
}

// watchNow has the connection follow conversation conv's turns from now
// on, if it does not yet: for a session it did not join here.
func (c *conn) watchNow(conv string) {
	if c.watching[conv] == nil {
		c.watch(conv)
		c.openWatch(conv, "", nil)
	}
}

// openWatch sends what the connection's watch of conv held, and from then
// on what comes, now that its join is acknowledged and the card shown
// (nil: none) is out.
func (c *conn) openWatch(conv, requestID string, shown []*store.Park) {
	if w := c.watching[conv]; w != nil {
		w.openWith(requestID, shown)
	}
}

// unwatchAll ends the connection's watches.
func (c *conn) unwatchAll() {
	for _, w := range c.watching {
		w.stop()
	}
}

// hear is the engine's stream telling the watch an event.
func (w *watch) hear(ev agent.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case !w.open:
		w.held = append(w.held, ev)
	case !w.old(ev):
		w.c.hear(w.conv, ev)
	}
}

func (w *watch) openWith(requestID string, shown []*store.Park) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.open {
		return
	}
	for _, p := range shown {
		w.shown, w.request = append(w.shown, p.ID), requestID
	}
	for _, ev := range w.held {
		if !w.old(ev) {
			w.c.hear(w.conv, ev)
		}
	}
	w.open, w.held = true, nil
}

// alsoShown adds park id, shown after the ones the watch was opened
// with (the next of a group's cards), to what news comes after.
func (w *watch) alsoShown(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.shown) > 0 {
		w.shown = append(w.shown, id)
	}
}

// old tells whether ev is of the run of the turn that raised the card w
// was shown on joining: that run parked, and the card is what is left of
// it.
func (w *watch) old(ev agent.Event) bool {
	if len(w.shown) == 0 {
		return false
	}
	if ev.RequestID == w.request && !slices.Contains(w.shown, ev.After) {
		return true
	}
	w.shown = nil
	return false
}
