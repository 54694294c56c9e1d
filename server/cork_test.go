package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// countingListener counts the writes to the connections it accepts.
type countingListener struct {
	net.Listener
	writes atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, writes: &l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// A batch of frames leaves in one socket write, on a real port through
// websocket.Accept, and the client reads every frame, in order. Without
// the cork it took a write a frame.
func TestBatchIsOneWrite(t *testing.T) {
	const frames = 20
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	batchWrites := make(chan int64, 1)
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &corkingWriter{ResponseWriter: w}
		ws, err := websocket.Accept(cw, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		defer ws.CloseNow()
		c := &conn{ws: ws, sock: cw.conn}
		var batch [][]byte
		for i := range frames {
			batch = append(batch, fmt.Appendf(nil, `{"n":%d,"pad":%q}`, i, strings.Repeat("x", 300*i)))
		}
		before := cl.writes.Load()
		if err := c.writeBatch(batch); err != nil {
			t.Error(err)
		}
		batchWrites <- cl.writes.Load() - before
		ws.Close(websocket.StatusNormalClosure, "")
	}))
	hs.Listener = cl
	hs.Start()
	defer hs.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	for i := range frames {
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if want := fmt.Sprintf(`{"n":%d,`, i); !strings.HasPrefix(string(data), want) || len(data) < 300*i {
			t.Fatalf("frame %d: got %.20s… (%d bytes)", i, data, len(data))
		}
	}
	if n := <-batchWrites; n != 1 {
		t.Errorf("a batch of %d frames took %d socket writes, want 1", frames, n)
	}
	ws.Read(ctx) // the close frame
}
