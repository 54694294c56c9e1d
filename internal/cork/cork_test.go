package cork

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/internal/wstest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// served is the server's side of a corkedPair.
type served struct {
	ws   *websocket.Conn
	sock *Conn
}

func (s served) writeBatch(frames [][]byte) error {
	return s.sock.WriteBatch(s.ws, frames, 10*time.Second)
}

// corkedPair serves one connection on a real port through a Writer, and
// dials it: handle gets the server's side and the socket writes counted so
// far. The server closes its side once handle returns.
func corkedPair(tb testing.TB, handle func(c served, writes *atomic.Int64)) *websocket.Conn {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	cl := &wstest.CountingListener{Listener: ln}
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &Writer{ResponseWriter: w}
		ws, err := websocket.Accept(cw, r, nil)
		if err != nil {
			tb.Error(err)
			return
		}
		defer ws.CloseNow()
		handle(served{ws, cw.Conn}, &cl.Writes)
		ws.Close(websocket.StatusNormalClosure, "")
	}))
	hs.Listener = cl
	hs.Start()
	tb.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ws.CloseNow() })
	return ws
}

// A batch of frames leaves in one socket write, on a real port through
// websocket.Accept, and the client reads every frame, in order. Without
// the cork it took a write a frame.
func TestBatchIsOneWrite(t *testing.T) {
	const frames = 20
	batchWrites := make(chan int64, 1)
	ws := corkedPair(t, func(c served, writes *atomic.Int64) {
		var batch [][]byte
		for i := range frames {
			batch = append(batch, fmt.Appendf(nil, `{"n":%d,"pad":%q}`, i, strings.Repeat("x", 300*i)))
		}
		before := writes.Load()
		if err := c.writeBatch(batch); err != nil {
			t.Error(err)
		}
		batchWrites <- writes.Load() - before
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
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

// Frames written by another goroutine while the writer's batches are
// corked (a ping, a close) reach the client whole, none lost, each batch's
// in its order.
func TestCorkWithOtherWriters(t *testing.T) {
	const batches, batchLen, others = 50, 10, 200
	ws := corkedPair(t, func(c served, _ *atomic.Int64) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := range others {
				if err := c.ws.Write(context.Background(), websocket.MessageText, fmt.Appendf(nil, "o%d", i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		for b := range batches {
			var batch [][]byte
			for i := range batchLen {
				batch = append(batch, fmt.Appendf(nil, "b%d", b*batchLen+i))
			}
			if err := c.writeBatch(batch); err != nil {
				t.Error(err)
				break
			}
		}
		<-done
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	next := map[byte]int{'b': 0, 'o': 0}
	for range batches*batchLen + others {
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("after %v: %v", next, err)
		}
		if want := fmt.Sprintf("%c%d", data[0], next[data[0]]); string(data) != want {
			t.Fatalf("got frame %q, want %q", data, want)
		}
		next[data[0]]++
	}
	if _, _, err := ws.Read(ctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Errorf("the close frame: %v", err)
	}
}

// A client that does not take a batch within the timeout is cut off: the
// batch's write ends with an error instead of blocking the writer.
func TestBatchWatchdog(t *testing.T) {
	returned := make(chan error, 1)
	ws := corkedPair(t, func(c served, _ *atomic.Int64) {
		// 64 MiB: more than the loopback socket's buffers hold while the
		// client reads nothing.
		frame := make([]byte, 1<<20)
		batch := make([][]byte, 64)
		for i := range batch {
			batch[i] = frame
		}
		returned <- c.sock.WriteBatch(c.ws, batch, 100*time.Millisecond)
	})
	select {
	case err := <-returned:
		if !errors.Is(err, ErrTimedOut) {
			t.Errorf("a batch the client never read: %v, want ErrTimedOut", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the batch's write still blocks 10 s after its 100 ms timeout")
	}
	ws.CloseNow()
}

// BenchmarkBatch: the socket writes a batch of a cycle's size takes,
// corked (WriteBatch) and a write a frame (websocket.Conn's own), on a real
// port.
func BenchmarkBatch(b *testing.B) {
	frame := []byte(`{"data":{"requestId":"r2","token":"Plan "},"requestId":"r2","timestamp":1764633600000,"token":"Plan ","type":"stream_token"}`)
	batch := [][]byte{frame, frame, frame, frame, frame, frame}
	for _, corked := range []bool{true, false} {
		name := "corked"
		if !corked {
			name = "per-frame"
		}
		b.Run(name, func(b *testing.B) {
			ready := make(chan served, 1)
			var counted *atomic.Int64
			finished := make(chan struct{})
			client := corkedPair(b, func(c served, writes *atomic.Int64) {
				counted = writes
				ready <- c
				<-finished
			})
			defer close(finished)
			ctx := context.Background()
			read := make(chan error, 1)
			go func() {
				for range b.N * len(batch) {
					if _, _, err := client.Read(ctx); err != nil {
						read <- err
						return
					}
				}
				read <- nil
			}()
			c := <-ready
			before := counted.Load()
			b.ReportAllocs()
			b.ResetTimer()
			var err error
			for range b.N {
				if corked {
					err = c.writeBatch(batch)
				} else {
					for _, f := range batch {
						if err = c.ws.Write(ctx, websocket.MessageText, f); err != nil {
							break
						}
					}
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			if err := <-read; err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(counted.Load()-before)/float64(b.N), "writes/op")
		})
	}
}
