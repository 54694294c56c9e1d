// Sse serves kindkit's turn engine over plain HTTP and server-sent events,
// a second transport beside the WebSocket protocol of package server,
// built only on the engine's exported API: a client creates a
// conversation, listens to its events, sends a message, and answers the
// card the turn parks on. On a store that processes share, every process
// streams every turn.
//
// With -auth-secret (or $KINDKIT_AUTH_SECRET) every request carries an
// HS256 bearer token, as kindserver's (an Authorization: Bearer header, or
// ?token= where EventSource cannot set one): a conversation is its
// creator's, and an ask addressed to someone else (kindkit.AddressedTo)
// is shown to them waiting for its addressee, and refused as if it did
// not exist.
//
//	go run ./examples/sse -store sqlite:/tmp/sse.db
//	curl -X POST localhost:8090/conversations -d '{"supports":["choice_chips"]}'
//	curl -N localhost:8090/conversations/CONVERSATION/events
//	curl -X POST localhost:8090/sessions/SESSION/messages -d '{"text":"Compare your plans"}'
//	curl -X POST localhost:8090/sessions/SESSION/answers -d '{"interactionId":"ID","values":{…}}'
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/demo"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/server"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/dsn"
)

// handler is the transport: four routes over an engine, which it only
// reads the store through (a session or a conversation, by its id).
type handler struct {
	eng        *agent.Engine
	authSecret []byte // HS256 bearer tokens; none: no auth, an id is its bearer secret
}

func newHandler(eng *agent.Engine, authSecret []byte) http.Handler {
	h := &handler{eng: eng, authSecret: authSecret}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /conversations", h.authed(h.create))
	mux.HandleFunc("GET /conversations/{id}/events", h.authed(h.events))
	mux.HandleFunc("POST /sessions/{id}/messages", h.authed(h.send))
	mux.HandleFunc("POST /sessions/{id}/answers", h.authed(h.answer))
	return mux
}

// authed refuses a request without a valid token when auth is on, and
// hands next a context that names its principal and groups: the owner of
// what it creates, and whom an ask may be addressed to (agent.MayAnswer).
func (h *handler) authed(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if len(h.authSecret) == 0 {
			next(w, r)
			return
		}
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			token = r.URL.Query().Get("token") // EventSource sets no header
		}
		p, err := server.VerifyToken(strings.TrimSpace(token), h.authSecret, time.Now(), server.TokenRules{})
		if err != nil {
			http.Error(w, "a valid bearer token is required", http.StatusUnauthorized)
			return
		}
		ctx := agent.WithGroups(agent.WithPrincipal(r.Context(), p.Sub), p.Groups)
		next(w, r.WithContext(context.WithValue(ctx, ownerKey{}, p.Sub)))
	}
}

type ownerKey struct{}

// owner is whom r acts for: its token's subject, "" when auth is off.
func owner(r *http.Request) string {
	sub, _ := r.Context().Value(ownerKey{}).(string)
	return sub
}

// visible says whether r may see the conversation: any with auth off,
// else only one of its own. The conversation it may not see is, to it,
// one that does not exist.
func (h *handler) visible(r *http.Request, conversationID string) (bool, error) {
	if len(h.authSecret) == 0 {
		return true, nil
	}
	conv, err := h.eng.Store().Conversation(r.Context(), conversationID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil && conv.Owner == owner(r), err
}

func (h *handler) create(w http.ResponseWriter, r *http.Request) {
	var in struct{ Supports []string }
	if !decode(w, r, &in) {
		return
	}
	conv, sess, err := h.eng.NewConversation(r.Context(), owner(r), in.Supports, agent.Opening{})
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, http.StatusCreated, map[string]string{"conversationId": conv.ID, "sessionId": sess.ID})
}

// events streams the conversation's events until the client goes away;
// a client that does not keep up is cut off, and may listen again. Each
// event that has a position in the stream carries it as its id, and a
// client that listens again with the last one it saw as Last-Event-ID
// (as EventSource does) is told every event after it, once.
func (h *handler) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	from, err := agent.ParsePosition(r.Header.Get("Last-Event-ID"))
	if err != nil {
		http.Error(w, "Last-Event-ID: not an id this stream sent", http.StatusBadRequest)
		return
	}
	switch ok, err := h.visible(r, r.PathValue("id")); {
	case err != nil:
		fail(w, err)
		return
	case !ok:
		http.NotFound(w, r)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	events := make(chan agent.Event, 256)
	defer h.eng.Subscribe(ctx, r.PathValue("id"), from, func(ev agent.Event) {
		select {
		case events <- ev:
		default:
			cancel() // lagging: never block the turn
		}
	})()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-events:
			data, err := json.Marshal(h.wireEvent(r.Context(), ev))
			if err != nil {
				return
			}
			if !ev.Pos.IsZero() {
				if _, err := fmt.Fprintf(w, "id: %s\n", ev.Pos); err != nil {
					return
				}
			}
			if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Kind, data); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}

// sseEvent is an event's data on the wire.
type sseEvent struct {
	RequestID string          `json:"requestId"`
	After     string          `json:"after,omitempty"` // the card this run resumed from
	Text      string          `json:"text,omitempty"`
	Call      *store.ToolCall `json:"call,omitempty"`
	IsError   bool            `json:"isError,omitempty"`
	Card      *card           `json:"card,omitempty"`
	Reply     string          `json:"reply,omitempty"`
}

type card struct {
	InteractionID string          `json:"interactionId"`
	Kind          string          `json:"kind,omitempty"` // none: a write confirmation
	Spec          json.RawMessage `json:"spec,omitempty"`
	Reason        string          `json:"reason,omitempty"`
	// WaitingFor names whom the card is addressed to when the listener
	// may not answer it: they are shown it read-only.
	WaitingFor string `json:"waitingFor,omitempty"`
}

// wireEvent is ev as the listener of request context ctx sees it.
func (h *handler) wireEvent(ctx context.Context, ev agent.Event) sseEvent {
	out := sseEvent{RequestID: ev.RequestID, After: ev.After, Text: ev.Text, IsError: ev.IsError}
	switch {
	case ev.Park != nil:
		out.Card = &card{InteractionID: ev.Park.ID, Kind: ev.Park.Kind, Spec: ev.Park.Spec, Reason: ev.Park.Reason}
		if to := h.eng.AddressedTo(ev.Park); !agent.MayAnswer(ctx, to) {
			out.Card.WaitingFor = to
		}
	case ev.Reply != nil:
		out.Reply = ev.Reply.Text
	case ev.Message != nil:
		out.Text = ev.Message.Text
	case ev.Call.Name != "":
		out.Call = &ev.Call
	}
	return out
}

func (h *handler) send(w http.ResponseWriter, r *http.Request) {
	var in struct{ Text string }
	sess, ok := h.session(w, r, &in)
	if !ok {
		return
	}
	requestID := uuid.NewString() // names the turn on its events, no key: v4
	err := h.eng.Send(r.Context(), sess, agent.Message{RequestID: requestID, Text: in.Text}, nil)
	if errors.Is(err, agent.ErrTurnInProgress) {
		// A turn runs, or its card waits for the answer: answer it first.
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, http.StatusAccepted, map[string]string{"requestId": requestID})
}

func (h *handler) answer(w http.ResponseWriter, r *http.Request) {
	var in struct {
		InteractionID string
		Values        json.RawMessage
		Declined      bool
	}
	sess, ok := h.session(w, r, &in)
	if !ok {
		return
	}
	taken, err := h.eng.Submit(r.Context(), sess, in.InteractionID, agent.Answer{Values: in.Values, Declined: in.Declined}, nil)
	var invalid *agent.InvalidAnswerError
	var ended *agent.AskEndedError
	switch {
	case errors.As(err, &invalid):
		reply(w, http.StatusUnprocessableEntity, invalid.Errors)
	case errors.As(err, &ended):
		http.Error(w, ended.Error(), http.StatusConflict) // answered, expired, withdrawn or stopped, and when
	case err != nil:
		fail(w, err)
	case !taken:
		http.Error(w, "no such card is waiting", http.StatusConflict)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// session decodes the request's body into in and loads its session.
func (h *handler) session(w http.ResponseWriter, r *http.Request, in any) (*store.Session, bool) {
	if !decode(w, r, in) {
		return nil, false
	}
	sess, err := h.eng.Store().Session(r.Context(), r.PathValue("id"))
	visible := err == nil
	if visible {
		visible, err = h.visible(r, sess.ConversationID)
	}
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && !visible:
		http.NotFound(w, r)
		return nil, false
	case err != nil:
		fail(w, err)
		return nil, false
	}
	return sess, true
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(v); err != nil {
		http.Error(w, "invalid JSON: "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, err error) {
	log.Printf("sse: %v", err)
	http.Error(w, "internal error", http.StatusInternalServerError)
}

func main() {
	addr := flag.String("addr", "localhost:8090", "listen address")
	dsnFlag := flag.String("store", "memory", "memory, sqlite:PATH or postgres://…")
	authSecret := flag.String("auth-secret", "", "HS256 secret for bearer tokens (or $KINDKIT_AUTH_SECRET); none: no auth")
	flag.Parse()
	if *authSecret == "" {
		*authSecret = os.Getenv("KINDKIT_AUTH_SECRET") // not the flag's default: -help would print it
	}
	ctx := context.Background()
	st, closeStore, err := dsn.Open(ctx, *dsnFlag, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer closeStore()
	catalog, err := kinds.All()
	if err != nil {
		log.Fatal(err)
	}
	eng, err := agent.NewEngine(agent.Config{Catalog: catalog, Store: st, Model: demo.Model{}})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	log.Printf("sse: listening on http://%s", *addr)
	log.Fatal(http.ListenAndServe(*addr, newHandler(eng, []byte(*authSecret))))
}
