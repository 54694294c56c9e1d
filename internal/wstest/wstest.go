// Package wstest is a small WebSocket client for kindkit's tests: send a
// frame, read the next event, expect events by type, read a dot path.
package wstest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Timeout bounds every read and write.
const Timeout = 10 * time.Second

// Client is one test connection; failures end the test.
type Client struct {
	T  testing.TB
	WS *websocket.Conn
}

// Dial connects to url and closes the connection when the test ends.
func Dial(t testing.TB, url string) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	ws.SetReadLimit(4 << 20)
	t.Cleanup(func() { ws.CloseNow() })
	return &Client{t, ws}
}

// Send writes one text frame.
func (c *Client) Send(frame string) {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if err := c.WS.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		c.T.Fatalf("send: %v", err)
	}
}

// Next reads the next event.
func (c *Client) Next() map[string]any {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	_, data, err := c.WS.Read(ctx)
	if err != nil {
		c.T.Fatalf("read: %v", err)
	}
	var ev map[string]any
	if err := json.Unmarshal(data, &ev); err != nil {
		c.T.Fatalf("event %s: %v", data, err)
	}
	return ev
}

// Expect reads one event per type and checks the types in order.
func (c *Client) Expect(types ...string) []map[string]any {
	c.T.Helper()
	var out []map[string]any
	for _, typ := range types {
		ev := c.Next()
		if ev["type"] != typ {
			b, _ := json.Marshal(ev)
			c.T.Fatalf("got %s, want a %s event", b, typ)
		}
		out = append(out, ev)
	}
	return out
}

// Path reads v at keys, or nil.
func Path(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// ErrorCode is an error event's error.code.
func ErrorCode(ev map[string]any) string {
	code, _ := Path(ev, "error", "code").(string)
	return code
}

// Turn reads the rest of a turn after its ack: token text until the
// terminal event, which it returns.
func (c *Client) Turn() (text string, terminal map[string]any) {
	c.T.Helper()
	for {
		ev := c.Next()
		switch ev["type"] {
		case "stream_token":
			text += ev["token"].(string)
		case "stream_chunk", "interaction_required":
		default:
			return text, ev
		}
	}
}

// AnswerAndEnd reads c's events until both the answer to request id and
// an eventual_response have come, as for a socket that submits while it
// also follows the turn; streamed tells whether another event came before
// the answer.
func (c *Client) AnswerAndEnd(id string) (answer, end map[string]any, streamed bool) {
	c.T.Helper()
	for answer == nil || end == nil {
		switch ev := c.Next(); {
		case ev["requestId"] == id:
			answer = ev
		case ev["type"] == "eventual_response":
			end = ev
		case answer == nil:
			streamed = true
		}
	}
	return answer, end, streamed
}
