package inbox

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/server"
	"github.com/kindkit/kindkit/store"
)

// MaxBody bounds a submit's body: an answer's values and two ids.
const MaxBody = 64 << 10

// Options are what a Handler needs beyond its engine.
type Options struct {
	// AuthSecret turns the inbox on: a call's bearer token must verify
	// under it (server.VerifyToken) and meet AuthRules. Without it the
	// inbox is off: every call gets a 404 that says it needs auth.
	AuthSecret []byte
	AuthRules  server.TokenRules
	Logger     *slog.Logger // default the engine's
}

// Handler serves an inbox's two calls, mounted at /inbox/asks and
// /inbox/submit (not at /inbox/, which would redirect the page, web's
// /inbox).
type Handler struct {
	eng  *agent.Engine
	opts Options
	log  *slog.Logger
}

// NewHandler returns the inbox handler of eng.
func NewHandler(eng *agent.Engine, opts Options) *Handler {
	log := opts.Logger
	if log == nil {
		log = eng.Logger()
	}
	return &Handler{eng: eng, opts: opts, log: log}
}

// Ask is a pending ask as /inbox/asks lists it: enough to draw its card
// (the page reads the kind's schemas from /kinds) and to answer it, never
// the conversation's messages.
type Ask struct {
	InteractionID  string          `json:"interactionId"`
	ConversationID string          `json:"conversationId"`
	Ask            string          `json:"ask"`            // interaction or confirmation
	Kind           string          `json:"kind,omitempty"` // an interaction's
	Spec           json.RawMessage `json:"spec,omitempty"`
	Reason         string          `json:"reason,omitempty"`
	Tool           string          `json:"tool,omitempty"` // a confirmation's
	Arguments      json.RawMessage `json:"arguments,omitempty"`
	Deadline       *time.Time      `json:"deadline,omitempty"`
	Addressee      string          `json:"addressee,omitempty"` // "" for an ask of a conversation the caller owns
	Created        time.Time       `json:"created"`
}

// Page is /inbox/asks's reply.
type Page struct {
	Asks       []Ask  `json:"asks"`
	NextCursor string `json:"nextCursor,omitempty"` // "" after the last page
}

// Answered is /inbox/submit's reply once the answer was taken: how the
// ask ended (its outcome's status), when and by whom.
type Answered struct {
	InteractionID string    `json:"interactionId"`
	Status        string    `json:"status"`
	At            time.Time `json:"at,omitzero"`
	Via           string    `json:"via,omitempty"`
	By            string    `json:"by,omitempty"`
}

// Problem is an error's body: a message for a person, a code for a
// program, and for an invalid answer the field errors (as the card shows
// them).
type Problem struct {
	Code    string               `json:"code"`
	Message string               `json:"error"`
	Errors  []kindkit.FieldError `json:"errors,omitempty"`
}

// submitRequest is /inbox/submit's body.
type submitRequest struct {
	ConversationID string          `json:"conversationId"`
	InteractionID  string          `json:"interactionId"`
	Values         json.RawMessage `json:"values,omitempty"`
	Declined       bool            `json:"declined,omitempty"`
	Approved       *bool           `json:"approved,omitempty"`
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	var call func(context.Context, http.ResponseWriter, *http.Request)
	method := http.MethodPost
	switch {
	case strings.HasSuffix(r.URL.Path, "/asks"):
		call, method = h.asks, http.MethodGet
	case strings.HasSuffix(r.URL.Path, "/submit"):
		call = h.submit
	default:
		http.NotFound(w, r)
		return
	}
	if len(h.opts.AuthSecret) == 0 {
		problem(w, http.StatusNotFound, "inbox_off", "the inbox needs auth: this server has no auth secret (kindserver -auth-secret), so it has no inbox")
		return
	}
	if r.Method != method {
		w.Header().Set("Allow", method)
		problem(w, http.StatusMethodNotAllowed, "method_not_allowed", "use "+method)
		return
	}
	p, ok := h.principal(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="kindkit inbox"`)
		problem(w, http.StatusUnauthorized, "unauthorized", "an inbox is someone's: send a valid bearer token (Authorization: Bearer)")
		return
	}
	call(agent.WithGroups(agent.WithPrincipal(r.Context(), p.Sub), p.Groups), w, r)
}

// principal is the request's bearer; ok false without a valid token, or
// with one that names no subject.
func (h *Handler) principal(r *http.Request) (server.Principal, bool) {
	token, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !found {
		return server.Principal{}, false
	}
	p, err := server.VerifyToken(strings.TrimSpace(token), h.opts.AuthSecret, h.eng.Clock().Now(), h.opts.AuthRules)
	if err != nil {
		h.log.Info("inbox: rejected bearer token", "err", err)
		return server.Principal{}, false
	}
	return p, p.Sub != ""
}

// asks answers GET /inbox/asks: a page of the caller's inbox.
func (h *Handler) asks(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	q, msg := parseQuery(r.URL.Query())
	if msg != "" {
		problem(w, http.StatusBadRequest, "bad_request", msg)
		return
	}
	page, err := h.eng.Inbox(ctx, q)
	if err != nil {
		h.failed(w, err)
		return
	}
	out := Page{Asks: make([]Ask, 0, len(page.Asks))}
	for _, a := range page.Asks {
		ask := Ask{InteractionID: a.ID, ConversationID: a.ConversationID, Ask: string(a.Ask), Kind: a.Kind, Spec: a.Spec,
			Reason: a.Reason, Tool: a.Tool, Arguments: a.Arguments, Addressee: a.Addressee, Created: a.CreatedAt.UTC()}
		if !a.Deadline.IsZero() {
			d := a.Deadline.UTC()
			ask.Deadline = &d
		}
		out.Asks = append(out.Asks, ask)
	}
	if page.Next != nil {
		out.NextCursor = FormatCursor(*page.Next)
	}
	reply(w, http.StatusOK, out)
}

// parseQuery reads /inbox/asks's parameters, or says what is wrong with
// them.
func parseQuery(v url.Values) (agent.InboxQuery, string) {
	var q agent.InboxQuery
	for name, vs := range v {
		switch name {
		case "kind", "before", "cursor", "limit":
		default:
			return q, "unknown parameter " + strconv.Quote(name) + "; an inbox takes kind, before, cursor and limit"
		}
		if len(vs) > 1 {
			return q, "parameter " + name + " is given more than once"
		}
	}
	q.Kind = v.Get("kind")
	if q.Kind != "" && !plain(q.Kind) {
		return q, "kind is not a kind's name"
	}
	if s := v.Get("before"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return q, "before is not an RFC 3339 time (like 2026-12-05T09:00:00Z)"
		}
		if t.Year() < 1970 || t.Year() > 2200 {
			return q, "before is out of range"
		}
		q.Before = t
	}
	if s := v.Get("cursor"); s != "" {
		c, err := ParseCursor(s)
		if err != nil {
			return q, err.Error()
		}
		q.After = &c
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > agent.MaxInboxPage {
			return q, "limit is a number from 1 to " + strconv.Itoa(agent.MaxInboxPage)
		}
		q.Limit = n
	}
	return q, ""
}

// plain says whether s may be an id or a name the store knows: not empty,
// not long, printable UTF-8 (a NUL, say, is no id, and PostgreSQL would
// refuse it in a query).
func plain(s string) bool {
	return s != "" && len(s) <= 200 && utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
}

// submit answers POST /inbox/submit: the answer goes through the engine's
// Submit (or Confirm), recorded as from an inbox.
func (h *Handler) submit(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		problem(w, http.StatusRequestEntityTooLarge, "too_large", "the request is larger than 64 KiB")
		return
	case err != nil:
		problem(w, http.StatusBadRequest, "bad_request", "the request could not be read")
		return
	}
	var req submitRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() {
		problem(w, http.StatusBadRequest, "bad_request", "the request is not a JSON object of conversationId, interactionId and an answer")
		return
	}
	if !plain(req.ConversationID) || !plain(req.InteractionID) {
		problem(w, http.StatusBadRequest, "bad_request", "an answer names its conversationId and interactionId, as the inbox listed them")
		return
	}
	p, pending, err := h.eng.FindAsk(ctx, req.ConversationID, req.InteractionID)
	if err != nil {
		h.failed(w, err)
		return
	}
	if p == nil || !h.eng.MayAnswerAsk(ctx, p) {
		notFound(w) // not there, or not the caller's: the same either way
		return
	}
	if !pending {
		h.ended(ctx, w, p)
		return
	}
	ok, err := h.eng.AnswerAsk(agent.ByInbox(ctx), p, agent.OutsideAnswer{Approved: req.Approved, Values: req.Values, Declined: req.Declined})
	var invalid *agent.InvalidAnswerError
	var late *agent.AskEndedError
	switch {
	case errors.Is(err, agent.ErrNoDecision), errors.Is(err, agent.ErrNoAnswer):
		problem(w, http.StatusBadRequest, "bad_request", strings.TrimPrefix(err.Error(), "agent: "))
	case errors.As(err, &invalid):
		problem(w, http.StatusUnprocessableEntity, "invalid_answer", "the answer has problems; nothing was taken", invalid.Errors...)
	case ok:
		h.answered(ctx, w, p)
	case errors.As(err, &late):
		problem(w, http.StatusConflict, "already_answered", late.Error())
	case err == nil:
		notFound(w) // gone meanwhile, and the store no longer knows it
	default:
		h.failed(w, err)
	}
}

// ended answers a submit to an ask that had ended before it: "already
// answered", with what became of it.
func (h *Handler) ended(ctx context.Context, w http.ResponseWriter, p *store.Park) {
	msg := "this ask already ended"
	if e, _ := h.eng.Ended(ctx, p.ConversationID, p.ID); e != nil {
		msg = e.Error()
	}
	problem(w, http.StatusConflict, "already_answered", msg)
}

// answered replies to a submit that was taken: how the ask ended, as the
// store keeps it.
func (h *Handler) answered(ctx context.Context, w http.ResponseWriter, p *store.Park) {
	a := Answered{InteractionID: p.ID, Status: "submitted"}
	if ended, err := h.eng.Store().EndedPark(ctx, p.ConversationID, p.ID); err == nil {
		var o kindkit.Payload
		_ = json.Unmarshal(ended.Outcome, &o) // an outcome is always a payload
		a.Status = cmp.Or(string(o.Status), string(ended.State))
		if rec := agent.AskRecordOf(ended).Record; rec != nil {
			a.At, a.Via, a.By = rec.At, rec.Via, rec.By
		}
	}
	reply(w, http.StatusOK, a)
}

func (h *Handler) failed(w http.ResponseWriter, err error) {
	if errors.Is(err, agent.ErrKindNotHosted) {
		problem(w, http.StatusServiceUnavailable, "kind_not_hosted", "this server does not host the card's kind")
		return
	}
	h.log.Error("inbox", "err", err)
	problem(w, http.StatusInternalServerError, "internal", "the server could not do this; try again")
}

// notFound is the answer for an ask that is not there, or not the
// caller's to see: the same either way.
func notFound(w http.ResponseWriter) {
	problem(w, http.StatusNotFound, "not_found", "no such ask")
}

func problem(w http.ResponseWriter, status int, code, msg string, errs ...kindkit.FieldError) {
	reply(w, status, Problem{Code: code, Message: msg, Errors: errs})
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
