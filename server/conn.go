package server

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/time/rate"

	"github.com/kindkit/kindkit/internal/cork"
	"github.com/kindkit/kindkit/store"
)

// conn is one WebSocket connection: a reader (serve) that dispatches
// actions, and one writer that sends queued frames in order.
type conn struct {
	srv       *Server
	ws        *websocket.Conn
	sock      *cork.Conn                     // ws's connection, which sends each batch in one write
	auth      bool                           // tokens are checked: conversations are scoped to their owner
	principal Principal                      // zero when anonymous
	ip        string                         // the client's address, as client names it: "ip:" and the address
	sessions  map[string]*store.Session      // the sessions this connection created, read by its reader only
	made      map[string]*store.Conversation // the conversations it made and sent no message to yet, read by its reader only
	watching  map[string]*watch              // the conversations it has sessions on, read by its reader only
	frames    *rate.Limiter                  // the frames it may send
	keepTurns bool                           // its turns outlive it (keepTurns), read by its reader only
	ext       atomic.Uint32                  // the extensions it asked for (asked)
	identity  atomic.Pointer[Principal]      // principal, for the other goroutines (waitingFor); nil when anonymous

	mu       sync.Mutex
	queue    *batch        // the frames for the writer; nil when none
	encoding event         // the event enqueueLocked writes: the encoder takes a pointer, and this one is on the heap already
	closed   bool          // no more frames will be queued
	wake     chan struct{} // signals the writer; capacity 1
	turn     *following    // the turn the connection follows, running or parked; nil when none
	// groupShown is the group of cards (ExtParallelAsks) whose first this
	// socket, which did not ask for them all at once, was shown;
	// queuedCalls are the calls of the group's others, kept from it.
	groupShown  string
	queuedCalls []string
	draining    bool // stop taking frames

	// inFrame is held while a frame is handled (capacity 1): a drain
	// takes it once, so that a send_message read just before the drain
	// has its turn started before the engine drains.
	inFrame chan struct{}

	writerDone chan struct{}
}

// testHookFrame, when set (by tests only, before any server starts), is
// called with every frame a connection reads (in) and every frame it
// queues, in the order queued, under c.mu: the wire gate checks them
// against the reference schemas (gate_test.go).
var testHookFrame func(c *conn, in bool, data []byte)

func newConn(s *Server, ws *websocket.Conn, sock *cork.Conn) *conn {
	limit := rate.Limit(s.opts.FrameRate)
	if s.opts.FrameRate < 0 {
		limit = rate.Inf
	}
	c := &conn{srv: s, ws: ws, sock: sock, frames: rate.NewLimiter(limit, s.opts.FrameBurst), wake: make(chan struct{}, 1), inFrame: make(chan struct{}, 1), writerDone: make(chan struct{})}
	go c.writeLoop()
	return c
}

// client names the connection's client for the limits it shares with its
// other connections: its principal, or its address when anonymous.
func (c *conn) client() string {
	if c.principal.Sub != "" {
		return "sub:" + c.principal.Sub
	}
	return c.ip
}

// visible tells whether this connection may see a conversation: without
// auth every one; with auth its own and ownerless ones.
func (c *conn) visible(conv *store.Conversation) bool {
	return !c.auth || conv.Owner == "" || conv.Owner == c.principal.Sub
}

// serve reads frames until the connection ends, then lets go of its turn:
// a parked one stays parked in the store, one an answer resumed (or of a
// connection that asked to keep its turns, or that drains) finishes
// unseen, and one it sent that never parked is aborted.
func (c *conn) serve(ctx context.Context) {
	ctx, stop := context.WithCancel(ctx)
	if c.srv.opts.IdleTimeout > 0 {
		defer c.keepAlive(ctx).stop()
	}
	defer stop()
	defer func() {
		c.mu.Lock()
		t := c.turn
		c.turn = nil
		draining := c.draining
		c.mu.Unlock()
		if t != nil && t.sent && !draining && !c.keepTurns {
			c.srv.engine.Abort(t.conv, t.requestID)
		}
		c.unwatchAll()
		c.closeQueue()
		<-c.writerDone
	}()
	// Reads are given no context: a Read given one that can end arms and
	// disarms a context.AfterFunc each time, five allocations a frame.
	// Should ctx end (a hijacked request's context does not before serve
	// returns), the connection is closed, which ends the Read as well.
	defer context.AfterFunc(ctx, func() { c.ws.CloseNow() })()
	for {
		typ, data, err := c.ws.Read(context.Background())
		if err != nil {
			return
		}
		if testHookFrame != nil {
			testHookFrame(c, true, data)
		}
		c.inFrame <- struct{}{}
		c.take(ctx, typ, data)
		<-c.inFrame
	}
}

// take handles one frame, unless the connection drains.
func (c *conn) take(ctx context.Context, typ websocket.MessageType, data []byte) {
	c.mu.Lock()
	draining := c.draining
	c.mu.Unlock()
	now := c.srv.clock.Now()
	switch {
	case draining:
	case !c.frames.AllowN(now, 1) || !c.srv.frames.Allow(c.client(), now):
		c.send(errorEvent("", codeRateLimited, msgRateLimited))
	case typ != websocket.MessageText:
		c.send(errorEvent("", codeValidation, msgBinary))
	default:
		c.dispatch(ctx, data)
	}
}

// keepAlive pings the client every half idle timeout and closes the
// connection when a pong does not come back within the other half: a peer
// that vanished without a close does not hold its socket forever. The
// pings run on a timer, not on a goroutine of the connection's own: that
// goroutine was the third of a parked connection, and 2.6 of the 41 KiB
// of heap and stack it held (kindload -hold 3000, memory store). Its ctx
// ends before its stop is called.
func (c *conn) keepAlive(ctx context.Context) *pinger {
	p := &pinger{}
	half := c.srv.opts.IdleTimeout / 2
	ping := func() {
		p.mu.Lock()
		if p.stopped {
			p.mu.Unlock()
			return
		}
		p.running.Add(1)
		p.mu.Unlock()
		defer p.running.Done()
		pingCtx, cancel := context.WithTimeout(ctx, half)
		err := c.ws.Ping(pingCtx)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				c.srv.log.Debug("no pong; closing the connection", "err", err)
				c.ws.CloseNow()
			}
			return
		}
		p.mu.Lock()
		if !p.stopped {
			p.timer.Reset(half)
		}
		p.mu.Unlock()
	}
	p.mu.Lock()
	p.timer = time.AfterFunc(half, ping)
	p.mu.Unlock()
	return p
}

// pinger is a connection's keepAlive timer.
type pinger struct {
	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
	running sync.WaitGroup // a ping under way; Add only while !stopped, under mu
}

// stop stops the pings and waits for one under way.
func (p *pinger) stop() {
	p.mu.Lock()
	p.stopped = true
	p.timer.Stop()
	p.mu.Unlock()
	p.running.Wait()
}

// send queues an event. Frames are encoded here, so the writer only writes.
func (c *conn) send(ev event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.enqueueLocked(ev)
}

func (c *conn) enqueueLocked(ev event) {
	if c.closed {
		return
	}
	if c.queue == nil {
		c.queue = batches.Get().(*batch)
	}
	q := c.queue
	start := q.buf.Len()
	c.encoding = ev
	err := c.encoding.writeTo(&q.buf)
	c.encoding = event{} // holds nothing between frames
	if err != nil {
		q.buf.Truncate(start)
		c.srv.log.Error("encode event", "type", ev.Type, "err", err)
		return
	}
	if testHookFrame != nil {
		testHookFrame(c, false, q.buf.Bytes()[start:])
	}
	if len(q.ends) >= maxQueuedFrames || q.buf.Len() > maxQueuedBytes {
		// A client that stops reading loses its connection, never the
		// server's memory or another connection's progress.
		c.srv.log.Warn("client is not reading; closing its connection", "queued", len(q.ends))
		c.closed = true
		c.queue = nil
		go c.ws.Close(websocket.StatusPolicyViolation, "too many unread frames")
		return
	}
	q.ends = append(q.ends, q.buf.Len())
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// A batch is the frames queued for the writer, encoded one after the other
// into one buffer: a frame costs no allocation of its own, and the buffer
// goes back to batches once written, so an idle connection holds none.
type batch struct {
	buf    bytes.Buffer
	ends   []int    // where each frame ends in buf
	frames [][]byte // the frames, for the writer: arrays kept with the batch
}

var batches = sync.Pool{New: func() any { return new(batch) }}

// maxKeptBatch is the largest buffer batches takes back.
const maxKeptBatch = 64 << 10

// split sets b.frames to the frames queued, which alias b.buf.
func (b *batch) split() [][]byte {
	data, start := b.buf.Bytes(), 0
	b.frames = b.frames[:0]
	for _, end := range b.ends {
		b.frames = append(b.frames, data[start:end])
		start = end
	}
	return b.frames
}

// release gives the written batch back to batches.
func (b *batch) release() {
	if b.buf.Cap() > maxKeptBatch {
		return
	}
	b.reset()
	batches.Put(b)
}

// reset empties the batch, keeping its arrays.
func (b *batch) reset() {
	b.buf.Reset()
	b.ends = b.ends[:0]
	clear(b.frames)
	b.frames = b.frames[:0]
}

// closeQueue lets the writer finish what is queued and stop.
func (c *conn) closeQueue() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *conn) writeLoop() {
	defer close(c.writerDone)
	for range c.wake {
		c.mu.Lock()
		b := c.queue
		c.queue = nil
		closed := c.closed
		c.mu.Unlock()
		var frames [][]byte
		if b != nil {
			frames = b.split()
		}
		err := c.sock.WriteBatch(c.ws, frames, writeTimeout)
		if b != nil {
			b.release() // the write copied the frames to the socket
		}
		if err != nil {
			if errors.Is(err, cork.ErrTimedOut) {
				c.srv.log.Warn("client is not reading; its write timed out, closing its connection", "timeout", writeTimeout)
			}
			c.mu.Lock()
			c.closed = true
			c.queue = nil
			c.mu.Unlock()
			c.ws.CloseNow()
			return
		}
		if closed {
			return
		}
	}
}

// stopTaking stops taking frames, once the one being handled is done.
func (c *conn) stopTaking(ctx context.Context) {
	c.mu.Lock()
	c.draining = true
	c.mu.Unlock()
	select {
	case c.inFrame <- struct{}{}:
		<-c.inFrame
	case <-ctx.Done():
	}
}

// closeDrained flushes what is queued and closes, once the engine has
// drained: the connection's turn has ended, or stays parked for the next
// process.
func (c *conn) closeDrained(ctx context.Context) {
	c.closeQueue()
	select {
	case <-c.writerDone:
	case <-ctx.Done():
	}
	if err := c.ws.Close(websocket.StatusGoingAway, "server draining"); err != nil && !errors.Is(err, context.Canceled) {
		c.srv.log.Debug("close after drain", "err", err)
	}
}
