package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/dsn"
	"github.com/kindkit/kindkit/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const raise = `{"questions":[{"question":"Which plan?","header":"Plan","options":["Basic","Pro"]}],"reason":"to quote"}`

// The whole cycle over HTTP and SSE: send, the card, an invalid answer,
// the answer, the reply; each event once and in order.
func TestCycle(t *testing.T) {
	for name, open := range stores() {
		t.Run(name, func(t *testing.T) {
			url := open(t)
			srv := process(t, url)
			ids := post(t, srv, "/conversations", `{"supports":["choice_chips"]}`, http.StatusCreated)
			events := listen(t, srv, ids["conversationId"])
			post(t, srv, "/sessions/"+ids["sessionId"]+"/messages", `{"text":"Compare your plans"}`, http.StatusAccepted)
			prompt := until(t, events, "prompt")
			post(t, srv, "/sessions/"+ids["sessionId"]+"/messages", `{"text":"hello?"}`, http.StatusConflict)
			answer := `{"interactionId":"` + prompt.Card.InteractionID + `","values":{"answers":[{"header":"Plan","options":["Pro"]}]}}`
			post(t, srv, "/sessions/"+ids["sessionId"]+"/answers", strings.Replace(answer, "Pro", "Gold", 1), http.StatusUnprocessableEntity)
			post(t, srv, "/sessions/"+ids["sessionId"]+"/answers", answer, http.StatusNoContent)
			post(t, srv, "/sessions/"+ids["sessionId"]+"/answers", answer, http.StatusConflict)
			until(t, events, "reply")
			if got, want := events.kinds(), []string{"message", "prompt", "tool_call", "tool_result", "text", "reply"}; !slices.Equal(got, want) {
				t.Errorf("events %v, want %v", got, want)
			}
		})
	}
}

// Two processes on one PostgreSQL database: a turn sent to one and
// answered on the other streams to the subscribers of both, the same
// events in the same order.
func TestTwoProcesses(t *testing.T) {
	url := storetest.PostgresDB(t)
	a, b := process(t, url), process(t, url)
	ids := post(t, a, "/conversations", `{"supports":["choice_chips"]}`, http.StatusCreated)
	onA, onB := listen(t, a, ids["conversationId"]), listen(t, b, ids["conversationId"])
	post(t, a, "/sessions/"+ids["sessionId"]+"/messages", `{"text":"Compare your plans"}`, http.StatusAccepted)
	prompt := until(t, onA, "prompt")
	until(t, onB, "tool_call") // the card's call, shown with it
	post(t, b, "/sessions/"+ids["sessionId"]+"/answers",
		`{"interactionId":"`+prompt.Card.InteractionID+`","values":{"answers":[{"header":"Plan","options":["Pro"]}]}}`, http.StatusNoContent)
	until(t, onA, "reply")
	until(t, onB, "reply")
	if !slices.Equal(onA.lines(), onB.lines()) {
		t.Errorf("the processes streamed different events:\n%s\n---\n%s", strings.Join(onA.lines(), "\n"), strings.Join(onB.lines(), "\n"))
	}
	if got, want := onA.kinds(), []string{"message", "prompt", "tool_call", "tool_result", "text", "reply"}; !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
}

// gated streams a card's raise, then, after the answer, the reply in
// three chunks, holding it after the first until gate is closed.
type gated struct{ gate chan struct{} }

func (g gated) Respond(ctx context.Context, req agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	if req.Position == 0 {
		return agent.ModelResponse{ToolCalls: []store.ToolCall{{ID: "call-1", Name: "request_choices", Arguments: raise}}, Position: 1}, nil
	}
	for i, chunk := range []string{"Pro ", "it ", "is."} {
		if i == 1 && g.gate != nil {
			select {
			case <-g.gate:
			case <-ctx.Done():
				return agent.ModelResponse{}, ctx.Err()
			}
		}
		onText(chunk)
	}
	return agent.ModelResponse{Text: "Pro it is.", Position: 2}, nil
}

// A stream dropped in the middle of the reply, listened to again with
// the last event id seen: the client reads every event once, in order.
// Again after the reply; and on PostgreSQL from another process, which
// hears the rest of the reply through the relay.
func TestResume(t *testing.T) {
	for name, open := range stores() {
		for _, when := range []string{"mid-reply", "after the reply", "another process"} {
			if when == "another process" && name != "postgres" {
				continue
			}
			t.Run(name+"/"+when, func(t *testing.T) {
				url := open(t)
				gate := make(chan struct{})
				var once sync.Once
				openGate := func() { once.Do(func() { close(gate) }) }
				srv := processWith(t, url, gated{gate})
				t.Cleanup(openGate) // before the process waits for its turn
				again := srv
				if when == "another process" {
					again = processWith(t, url, gated{})
				}
				ids := post(t, srv, "/conversations", `{"supports":["choice_chips"]}`, http.StatusCreated)
				conv := ids["conversationId"]
				first := listen(t, srv, conv)
				witness := listen(t, srv, conv) // never drops
				post(t, srv, "/sessions/"+ids["sessionId"]+"/messages", `{"text":"Compare your plans"}`, http.StatusAccepted)
				prompt := until(t, first, "prompt")
				post(t, srv, "/sessions/"+ids["sessionId"]+"/answers",
					`{"interactionId":"`+prompt.Card.InteractionID+`","values":{"answers":[{"header":"Plan","options":["Pro"]}]}}`, http.StatusNoContent)
				if got := until(t, first, "text"); got.Text != "Pro " {
					t.Fatalf("first text %q, want the reply's first chunk", got.Text)
				}
				first.drop()
				lastID := first.read[len(first.read)-1].id
				if lastID == "" {
					t.Fatal("no event id before the drop")
				}
				if when == "after the reply" {
					openGate()
					until(t, witness, "reply")
				}
				second := listenFrom(t, again, conv, lastID)
				openGate()
				until(t, second, "reply")
				if when != "after the reply" {
					until(t, witness, "reply")
				}
				// What the client read, its two connections end to end.
				client := &stream{read: append(slices.Clone(first.read), second.read...)}
				client.mergeText()
				if got, want := client.lines(), witness.lines(); !slices.Equal(got, want) {
					t.Errorf("the client read:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if got, want := client.kinds(), []string{"message", "prompt", "tool_call", "tool_result", "text", "reply"}; !slices.Equal(got, want) {
					t.Errorf("events %v, want %v", got, want)
				}
			})
		}
	}
}

// A Last-Event-ID the stream never sent is refused, with a reason.
func TestBadLastEventID(t *testing.T) {
	srv := process(t, "sqlite:"+filepath.Join(t.TempDir(), "sse.db"))
	ids := post(t, srv, "/conversations", `{}`, http.StatusCreated)
	for _, id := range []string{"x", "1", "-1.0", "01.2"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/conversations/"+ids["conversationId"]+"/events", nil)
		req.Header.Set("Last-Event-ID", id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "Last-Event-ID") {
			t.Errorf("Last-Event-ID %q: %d %s, want 400", id, resp.StatusCode, body)
		}
	}
}

func stores() map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "sse.db") },
		"postgres": func(t *testing.T) string { return storetest.PostgresDB(t) },
	}
}

// process is one kindkit process on the store url names, serving the
// transport, with a model that raises a choices card and then replies.
func process(t *testing.T, url string) *httptest.Server {
	t.Helper()
	model, err := agent.NewScripted([]agent.ScriptEntry{{Kind: "toolCall", Name: "request_choices", Arguments: raise}, {Kind: "text", Text: "Pro it is."}})
	if err != nil {
		t.Fatal(err)
	}
	return processWith(t, url, model)
}

// processWith is process with model.
func processWith(t *testing.T, url string, model agent.Model) *httptest.Server {
	t.Helper()
	srv, _ := serve(t, url, agent.Config{Model: model}, nil)
	return srv
}

// serve is one process on the store url names, with cfg's model and
// tools, and with auth on when authSecret is set.
func serve(t *testing.T, url string, cfg agent.Config, authSecret []byte) (*httptest.Server, *agent.Engine) {
	t.Helper()
	ctx := context.Background()
	st, closeStore, err := dsn.Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Catalog, err = kinds.All(); err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.Logger = st, slog.New(slog.DiscardHandler)
	eng, err := agent.NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newHandler(eng, authSecret))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		eng.Shutdown(ctx)
		closeStore()
	})
	readyCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := eng.RelayReady(readyCtx); err != nil {
		t.Fatal(err)
	}
	return srv, eng
}

func post(t *testing.T, srv *httptest.Server, path, body string, want int) map[string]string {
	t.Helper()
	resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("POST %s: %d %s, want %d", path, resp.StatusCode, data, want)
	}
	var out map[string]string
	json.Unmarshal(data, &out)
	return out
}

// stream is what one SSE client has read.
type stream struct {
	events chan heard
	read   []heard
	drop   func() // ends the connection, as a network that fails does
}

type heard struct {
	id   string // the last event id, as EventSource keeps it
	kind string
	data sseEvent
}

// listen subscribes to conversation conv's events, and returns once the
// subscription is made.
func listen(t *testing.T, srv *httptest.Server, conv string) *stream {
	t.Helper()
	return listenFrom(t, srv, conv, "")
}

// listenFrom is listen with lastID as Last-Event-ID, as a client that
// listens again sends it.
func listenFrom(t *testing.T, srv *httptest.Server, conv, lastID string) *stream {
	t.Helper()
	return listenAs(t, srv, conv, lastID, "")
}

// listenAs is listenFrom with a bearer token, sent as ?token= as an
// EventSource would.
func listenAs(t *testing.T, srv *httptest.Server, conv, lastID, token string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/conversations/"+conv+"/events?token="+token, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET events from %q: %s", lastID, resp.Status)
	}
	s := &stream{events: make(chan heard, 64)}
	done := make(chan struct{})
	var once sync.Once
	s.drop = func() { once.Do(func() { cancel(); resp.Body.Close(); <-done }) }
	t.Cleanup(s.drop)
	go func() {
		defer close(done)
		sc := bufio.NewScanner(resp.Body)
		var h heard
		id := lastID
		for sc.Scan() {
			line := sc.Bytes()
			switch {
			case bytes.HasPrefix(line, []byte("id: ")):
				id = string(line[len("id: "):])
			case bytes.HasPrefix(line, []byte("event: ")):
				h.kind = string(line[len("event: "):])
			case bytes.HasPrefix(line, []byte("data: ")):
				json.Unmarshal(line[len("data: "):], &h.data)
			case len(line) == 0 && h.kind != "":
				h.id = id
				s.events <- h
				h = heard{}
			}
		}
	}()
	return s
}

// until reads events up to the first of kind. A run of a turn's text is
// kept as one: how it is cut into events is the model's and the relay's.
func until(t *testing.T, s *stream, kind string) sseEvent {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case h := <-s.events:
			if n := len(s.read); h.kind == "text" && n > 0 && s.read[n-1].kind == "text" {
				s.read[n-1].data.Text += h.data.Text
				s.read[n-1].id = h.id
				continue
			}
			s.read = append(s.read, h)
			if h.kind == kind {
				return h.data
			}
		case <-timeout:
			t.Fatalf("no %s event; read %v", kind, s.kinds())
		}
	}
}

// mergeText keeps each run of text as one event, as until does.
func (s *stream) mergeText() {
	var out []heard
	for _, h := range s.read {
		if n := len(out); h.kind == "text" && n > 0 && out[n-1].kind == "text" {
			out[n-1].data.Text += h.data.Text
			out[n-1].id = h.id
			continue
		}
		out = append(out, h)
	}
	s.read = out
}

func (s *stream) kinds() []string {
	var out []string
	for _, h := range s.read {
		out = append(out, h.kind)
	}
	return out
}

func (s *stream) lines() []string {
	var out []string
	for _, h := range s.read {
		data, _ := json.Marshal(h.data)
		out = append(out, h.id+" "+h.kind+" "+string(data))
	}
	return out
}
