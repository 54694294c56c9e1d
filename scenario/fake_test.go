package scenario_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/scenario"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// binary is a canned frame sent as a binary message.
type binary string

// fake is a WebSocket server that replays canned frames: after the i-th frame
// it receives, it sends replies[i] (strings as text, binary values as binary
// messages), and it records what it received.
type fake struct {
	URL string

	mu  sync.Mutex
	got []string
}

func newFake(t *testing.T, replies ...[]any) *fake {
	t.Helper()
	f := &fake{}
	var handlers sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlers.Add(1)
		defer handlers.Done()
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := context.Background()
		for i := 0; ; i++ {
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			f.mu.Lock()
			f.got = append(f.got, string(data))
			f.mu.Unlock()
			if i >= len(replies) {
				continue
			}
			for _, out := range replies[i] {
				var err error
				switch out := out.(type) {
				case string:
					err = c.Write(ctx, websocket.MessageText, []byte(out))
				case binary:
					err = c.Write(ctx, websocket.MessageBinary, []byte(out))
				default:
					panic("fake: a reply is a string or a binary")
				}
				if err != nil {
					return
				}
			}
		}
	}))
	t.Cleanup(func() {
		srv.Close()
		done := make(chan struct{})
		go func() { handlers.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("fake server: a handler did not return")
		}
	})
	f.URL = "ws" + strings.TrimPrefix(srv.URL, "http")
	return f
}

// newClosedURL is the URL of a server that is gone.
func newClosedURL(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	srv.Close()
	return url
}

func (f *fake) received() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.got...)
}

// parse builds a scenario from its JSON text.
func parse(t *testing.T, text string) *scenario.Scenario {
	t.Helper()
	s, err := scenario.Parse("test.json", []byte(text))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return s
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
