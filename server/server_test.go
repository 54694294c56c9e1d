package server_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/runtime/memstore"
	"github.com/kindkit/kindkit/server"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startServer runs a server with cfg's model and tools on a real port.
func startServer(t *testing.T, cfg server.Config) (*server.Server, string) {
	t.Helper()
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Catalog = catalog
	if cfg.Store == nil {
		cfg.Store = memstore.New()
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		hs.Close()
	})
	return srv, "ws" + strings.TrimPrefix(hs.URL, "http") + "/ws"
}

type client struct {
	t  *testing.T
	ws *websocket.Conn
}

func dial(t *testing.T, url string) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(4 << 20)
	t.Cleanup(func() { ws.CloseNow() })
	return &client{t, ws}
}

func (c *client) send(frame string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		c.t.Fatal(err)
	}
}

// next reads the next event, skipping pong and keepalive only when asked.
func (c *client) next() map[string]any {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, data, err := c.ws.Read(ctx)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var ev map[string]any
	if err := json.Unmarshal(data, &ev); err != nil {
		c.t.Fatal(err)
	}
	return ev
}

// expect reads events and checks their types in order.
func (c *client) expect(types ...string) []map[string]any {
	c.t.Helper()
	var out []map[string]any
	for _, typ := range types {
		ev := c.next()
		if ev["type"] != typ {
			b, _ := json.Marshal(ev)
			c.t.Fatalf("got %s, want a %s event", b, typ)
		}
		out = append(out, ev)
	}
	return out
}

func path(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func TestDemoFlow(t *testing.T) {
	_, url := startServer(t, server.Config{Model: server.Demo{}})
	c := dial(t, url)
	c.send(`{"action":"create_conversation_session","requestId":"r1","agentId":"a","supports":["choice_chips"]}`)
	sid := path(c.expect("immediate_response")[0], "data", "sessionId").(string)
	c.send(`{"action":"send_message","requestId":"r2","sessionId":"` + sid + `","message":"hi"}`)
	evs := c.expect("immediate_response", "interaction_required", "stream_chunk")
	iid := path(evs[1], "data", "data", "interactionId").(string)
	c.send(`{"action":"submit_interaction","requestId":"r2","sessionId":"` + sid + `","interactionId":"` + iid + `","values":{"answers":[{"header":"Plan","options":["Team"]},{"header":"Topics","options":["Pricing"],"other":"SSO"}]}}`)
	c.expect("immediate_response", "stream_chunk")
	var text string
	for {
		ev := c.next()
		if ev["type"] == "stream_token" {
			text += ev["token"].(string)
			continue
		}
		if ev["type"] != "eventual_response" {
			t.Fatalf("got %v", ev)
		}
		break
	}
	if !strings.Contains(text, "Plan: Team; Topics: Pricing, SSO") {
		t.Errorf("reply %q does not answer from the picks", text)
	}
}
