package cork

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// Conn holds back what is written to a connection while corked and sends
// it in one write when uncorked. Frames that other goroutines write
// meanwhile (pongs, pings, close frames) join the held bytes in the order
// written; the uncork sends them.
type Conn struct {
	net.Conn

	mu     sync.Mutex // held across the socket write, so writes keep their order
	corked bool
	held   *[]byte // from heldBuffers while corked and written to

	watchdog *time.Timer // WriteBatch's; only its caller, the one writer, touches it
	cutOff   atomic.Bool // the watchdog fired
}

// ErrTimedOut is WriteBatch's error when the client did not accept a batch
// in time and was cut off: a client that does not read.
var ErrTimedOut = errors.New("cork: the client did not accept the write in time")

// heldBuffers keeps the buffers of batches, so that a connection holds none
// between batches and a short connection allocates none.
var heldBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// maxKept is the largest buffer heldBuffers takes back.
const maxKept = 64 << 10

// WriteBatch writes frames to ws, whose connection is c, as text messages
// in one socket write. One watchdog a batch rather than a deadline a frame:
// a client that takes longer than timeout to accept the batch is cut off
// (ws.CloseNow), which ends the write with an error. Only one goroutine,
// the connection's writer, may call it.
func (c *Conn) WriteBatch(ws *websocket.Conn, frames [][]byte, timeout time.Duration) error {
	if c.watchdog == nil {
		c.watchdog = time.AfterFunc(timeout, func() {
			c.cutOff.Store(true)
			ws.CloseNow()
		})
	} else {
		c.watchdog.Reset(timeout)
	}
	defer c.watchdog.Stop()
	c.cork()
	for _, data := range frames {
		// Corked, the write only appends to the held bytes: no deadline
		// applies until the uncork.
		if err := ws.Write(context.Background(), websocket.MessageText, data); err != nil {
			c.uncork() // what others wrote meanwhile, such as a close frame
			return c.why(err)
		}
	}
	return c.why(c.uncork())
}

// why is err, a write's, as ErrTimedOut when the watchdog cut it off.
func (c *Conn) why(err error) error {
	if err != nil && c.cutOff.Load() {
		return fmt.Errorf("%w: %v", ErrTimedOut, err)
	}
	return err
}

func (c *Conn) cork() {
	c.mu.Lock()
	c.corked = true
	c.mu.Unlock()
}

// uncork sends what was held.
func (c *Conn) uncork() error {
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

func (c *Conn) Write(p []byte) (int, error) {
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

// Writer is the http.ResponseWriter to hand websocket.Accept: its Hijack
// hands over the connection as a Conn.
type Writer struct {
	http.ResponseWriter
	Conn *Conn // set by Hijack
}

func (w *Writer) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	// The handshake's response is in brw.Writer until flushed; after it,
	// the writer keeps its buffer and writes to the Conn.
	if err := brw.Writer.Flush(); err != nil {
		nc.Close()
		return nil, nil, err
	}
	w.Conn = &Conn{Conn: nc}
	brw.Writer.Reset(w.Conn)
	return w.Conn, brw, nil
}

func (w *Writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }
