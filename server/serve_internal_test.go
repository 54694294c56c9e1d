package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/kindkit/kindkit/internal/cork"
)

// serve reads without a context of its own (a Read given one costs
// allocations each time); when its context ends, the connection is closed
// all the same, which ends serve and the client's read.
func TestServeEndsWithItsContext(t *testing.T) {
	srv := quietServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &cork.Writer{ResponseWriter: w}
		ws, err := websocket.Accept(cw, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		defer ws.CloseNow()
		newConn(srv, ws, cw.Conn).serve(ctx)
		close(served)
	}))
	defer hs.Close()
	client, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(hs.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.CloseNow()
	if err := client.Write(context.Background(), websocket.MessageText, []byte(`{"action":"ping","requestId":"p"}`)); err != nil {
		t.Fatal(err)
	}
	if _, data, err := client.Read(context.Background()); err != nil || !strings.Contains(string(data), `"pong"`) {
		t.Fatalf("ping: %s, %v", data, err)
	}
	cancel()
	<-served // with the Read never ended, this waits until go test's timeout
	if _, _, err := client.Read(context.Background()); err == nil {
		t.Error("the client reads on after serve's context ended")
	}
}
