package server

import (
	"bufio"
	"net"
	"net/http"
	"sync"
)

// corkConn holds back what is written to a connection while corked and
// sends it in one write when uncorked. The writer sends a batch of queued
// frames corked: websocket.Conn flushes every message to the socket, and a
// cycle's 35 frames went out in 35 write syscalls, about a fifth of the
// server's CPU on the memory store. Corked, they go out in one write a
// batch (about six a cycle). The frames and their order are unchanged.
//
// Frames other goroutines write meanwhile (pongs, pings, close frames) join
// the held bytes in the order written; the batch's uncork sends them.
type corkConn struct {
	net.Conn

	mu     sync.Mutex // held across the socket write, so writes keep their order
	corked bool
	held   *[]byte // from heldBuffers while corked and written to
}

// heldBuffers keeps the buffers of batches, so that a connection holds none
// between batches and a short connection allocates none.
var heldBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// maxKept is the largest buffer heldBuffers takes back.
const maxKept = 64 << 10

func (c *corkConn) cork() {
	c.mu.Lock()
	c.corked = true
	c.mu.Unlock()
}

// uncork sends what was held.
func (c *corkConn) uncork() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	if c.held == nil {
		return nil
	}
	_, err := c.Conn.Write(*c.held)
	if cap(*c.held) <= maxKept {
		*c.held = (*c.held)[:0]
		heldBuffers.Put(c.held)
	}
	c.held = nil
	return err
}

func (c *corkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.corked {
		return c.Conn.Write(p)
	}
	if c.held == nil {
		c.held = heldBuffers.Get().(*[]byte)
	}
	*c.held = append(*c.held, p...)
	return len(p), nil
}

// corkingWriter is the http.ResponseWriter websocket.Accept is given: its
// Hijack hands over the connection as a corkConn.
type corkingWriter struct {
	http.ResponseWriter
	conn *corkConn // set by Hijack
}

func (w *corkingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	// The handshake's response is in brw.Writer until flushed; after it,
	// the writer keeps its buffer and writes to the corkConn.
	if err := brw.Writer.Flush(); err != nil {
		nc.Close()
		return nil, nil, err
	}
	w.conn = &corkConn{Conn: nc}
	brw.Writer.Reset(w.conn)
	return w.conn, brw, nil
}

func (w *corkingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
