package link

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/server"
	"github.com/kindkit/kindkit/store"
)

// MaxBody bounds a request's body: an answer's values and its token.
const MaxBody = 64 << 10

// Options are what a Handler needs beyond its engine.
type Options struct {
	Signer *Signer
	// AuthSecret, when set, turns auth on: a link answers (and shows its
	// ask) only for a bearer token (Authorization: Bearer) whose principal
	// may answer it: its addressee (agent.MayAnswer) when it is addressed,
	// else the conversation's owner. AuthRules are what such a token must
	// carry besides.
	AuthSecret []byte
	AuthRules  server.TokenRules
	Logger     *slog.Logger // default the engine's
}

// Handler serves an answer page's calls, mounted at /answer/ask and
// /answer/submit (not at /answer/, which would redirect the page):
//
//	POST /answer/ask     {"token"}                          → the ask, or how it ended
//	POST /answer/submit  {"token", "values" | "declined"}   → how it ended
//	POST /answer/submit  {"token", "approved": bool}        (a tool call's confirmation)
//
// The page itself (GET /answer) is the web package's.
type Handler struct {
	eng  *agent.Engine
	opts Options
	log  *slog.Logger
}

// NewHandler returns the handler of links that opts.Signer signs.
func NewHandler(eng *agent.Engine, opts Options) *Handler {
	if opts.Signer == nil {
		panic("link: NewHandler without a Signer")
	}
	log := opts.Logger
	if log == nil {
		log = eng.Logger()
	}
	return &Handler{eng: eng, opts: opts, log: log}
}

// request is a call's body.
type request struct {
	Token    string          `json:"token"`
	Values   json.RawMessage `json:"values,omitempty"`
	Declined bool            `json:"declined,omitempty"`
	Approved *bool           `json:"approved,omitempty"`
}

// Ask is what /answer/ask says of a pending ask: enough to draw its card
// (the page reads the kind's schemas from /kinds), never the
// conversation.
type Ask struct {
	State         string          `json:"state"` // "pending"
	InteractionID string          `json:"interactionId"`
	Ask           string          `json:"ask"`            // interaction or confirmation
	Kind          string          `json:"kind,omitempty"` // an interaction's
	Spec          json.RawMessage `json:"spec,omitempty"`
	Reason        string          `json:"reason,omitempty"`
	Tool          string          `json:"tool,omitempty"` // a confirmation's
	Arguments     json.RawMessage `json:"arguments,omitempty"`
	Deadline      *time.Time      `json:"deadline,omitempty"`
	Expires       time.Time       `json:"expires"` // the link's
}

// Ended is what both calls say of an ask that ended: how (its outcome's
// status: submitted, declined, no_response, withdrawn, cancelled,
// approved, denied), when, by which path (agent.ViaLink, ViaCard, …) and
// by whom (the principal; "" when anonymous or the engine ended it).
// Repeated is true when a submit repeated the answer that ended it.
type Ended struct {
	State         string    `json:"state"` // "ended"
	InteractionID string    `json:"interactionId"`
	Kind          string    `json:"kind,omitempty"`
	Status        string    `json:"status"`
	At            time.Time `json:"at,omitzero"`
	Via           string    `json:"via,omitempty"`
	By            string    `json:"by,omitempty"`
	Repeated      bool      `json:"repeated,omitempty"`
}

// Problem is an error's body: a message for a person, a code for a
// program, and for an invalid answer the field errors (as the card shows
// them); an "already_answered" carries how the ask ended.
type Problem struct {
	Code    string               `json:"code"`
	Message string               `json:"error"`
	Errors  []kindkit.FieldError `json:"errors,omitempty"`
	Ended   *Ended               `json:"ended,omitempty"`
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	var call func(context.Context, http.ResponseWriter, Claims, request)
	switch {
	case strings.HasSuffix(r.URL.Path, "/ask"):
		call = h.ask
	case strings.HasSuffix(r.URL.Path, "/submit"):
		call = h.submit
	default:
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		problem(w, http.StatusMethodNotAllowed, "method_not_allowed", "use POST")
		return
	}
	var req request
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
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		problem(w, http.StatusBadRequest, "bad_request", "the request is not a JSON object of token and answer")
		return
	}
	c, err := h.opts.Signer.Parse(req.Token, h.eng.Clock().Now())
	switch {
	case errors.Is(err, ErrMalformed):
		problem(w, http.StatusBadRequest, "malformed_link", "this is not an answer link; copy the whole link")
		return
	case errors.Is(err, ErrForged):
		problem(w, http.StatusForbidden, "invalid_link", "this link was not made by this server, or was changed")
		return
	case errors.Is(err, ErrExpired):
		problem(w, http.StatusGone, "link_expired", "this link expired at "+c.Expires.Format(time.RFC3339))
		return
	}
	ctx := r.Context()
	if len(h.opts.AuthSecret) > 0 {
		p, ok := h.principal(r)
		if !ok {
			notFound(w) // as if the ask did not exist
			return
		}
		ctx = agent.WithGroups(agent.WithPrincipal(ctx, p.Sub), p.Groups)
		ask, _, err := h.eng.FindAsk(ctx, c.ConversationID, c.AskID)
		if err != nil || ask == nil || !h.eng.MayAnswerAsk(ctx, ask) {
			notFound(w)
			return
		}
	}
	call(ctx, w, c, req)
}

// principal is the request's bearer; ok false without a valid token.
func (h *Handler) principal(r *http.Request) (server.Principal, bool) {
	token, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !found {
		return server.Principal{}, false
	}
	p, err := server.VerifyToken(strings.TrimSpace(token), h.opts.AuthSecret, h.eng.Clock().Now(), h.opts.AuthRules)
	if err != nil {
		h.log.Info("link: rejected bearer token", "err", err)
		return server.Principal{}, false
	}
	return p, true
}

// ask answers /answer/ask: the pending ask the link names, or how it
// ended.
func (h *Handler) ask(ctx context.Context, w http.ResponseWriter, c Claims, _ request) {
	p, pending, err := h.eng.FindAsk(ctx, c.ConversationID, c.AskID)
	if err != nil {
		h.failed(w, err)
		return
	}
	if !pending {
		h.ended(ctx, w, c, nil)
		return
	}
	if !agent.MayAnswer(ctx, h.eng.AddressedTo(p)) {
		notFound(w) // addressed, and auth off: no one may answer it here
		return
	}
	a := Ask{State: "pending", InteractionID: p.ID, Ask: string(p.Type), Expires: c.Expires}
	if !p.Deadline.IsZero() {
		d := p.Deadline.UTC()
		a.Deadline = &d
	}
	if p.Type == store.ParkConfirmation {
		a.Tool = p.ToolCall.Name
		a.Arguments = toolArguments(p.ToolCall.Arguments)
	} else {
		a.Kind, a.Spec, a.Reason = p.Kind, p.Spec, p.Reason
	}
	reply(w, http.StatusOK, a)
}

// submit answers /answer/submit: the answer goes through the engine's
// Submit (or Confirm), recorded as by link.
func (h *Handler) submit(ctx context.Context, w http.ResponseWriter, c Claims, req request) {
	p, pending, err := h.eng.FindAsk(ctx, c.ConversationID, c.AskID)
	if err != nil {
		h.failed(w, err)
		return
	}
	if !pending {
		h.ended(ctx, w, c, &req)
		return
	}
	ok, err := h.eng.AnswerAsk(agent.ByLink(ctx), p, agent.OutsideAnswer{Approved: req.Approved, Values: req.Values, Declined: req.Declined})
	var invalid *agent.InvalidAnswerError
	var late *agent.AskEndedError
	switch {
	case errors.Is(err, agent.ErrNoDecision), errors.Is(err, agent.ErrNoAnswer):
		problem(w, http.StatusBadRequest, "bad_request", strings.TrimPrefix(err.Error(), "agent: "))
	case errors.As(err, &invalid):
		problem(w, http.StatusUnprocessableEntity, "invalid_answer", "the answer has problems; nothing was taken", invalid.Errors...)
	case ok:
		h.ended(ctx, w, c, nil) // taken: how it ended
	case errors.As(err, &late), err == nil:
		h.ended(ctx, w, c, &req) // taken by another meanwhile: the first answer says
	default:
		h.failed(w, err)
	}
}

// ended says how the ask c names ended. For a submit (req not nil), the
// same answer as the one that ended it gets that first result, any other
// the "already answered" error (409) with when and by which path.
func (h *Handler) ended(ctx context.Context, w http.ResponseWriter, c Claims, req *request) {
	p, err := h.eng.Store().EndedPark(ctx, c.ConversationID, c.AskID)
	if errors.Is(err, store.ErrNotFound) {
		notFound(w)
		return
	}
	if err != nil {
		h.failed(w, err)
		return
	}
	rec := agent.AskRecordOf(p)
	var o kindkit.Payload
	_ = json.Unmarshal(p.Outcome, &o) // an outcome is always a payload
	e := Ended{State: "ended", InteractionID: p.ID, Kind: rec.Kind, Status: string(o.Status)}
	if e.Status == "" {
		e.Status = string(p.State)
	}
	if rec.Record != nil {
		e.At, e.Via, e.By = rec.Record.At, rec.Record.Via, rec.Record.By
	}
	if req == nil {
		reply(w, http.StatusOK, e)
		return
	}
	if h.same(p, o, *req) {
		e.Repeated = true
		reply(w, http.StatusOK, e)
		return
	}
	msg := "this ask already ended"
	if ended, _ := h.eng.Ended(ctx, c.ConversationID, c.AskID); ended != nil {
		msg = ended.Error()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusConflict)
	json.NewEncoder(w).Encode(Problem{Code: "already_answered", Message: msg, Ended: &e})
}

// same says whether req answers ended park p as its outcome o did: the
// same decline or decision, or the same values once the kind has made
// them canonical.
func (h *Handler) same(p *store.Park, o kindkit.Payload, req request) bool {
	if p.Type == store.ParkConfirmation {
		return req.Approved != nil && (*req.Approved && o.Status == "approved" || !*req.Approved && o.Status == "denied")
	}
	switch o.Status {
	case kindkit.StatusDeclined:
		return req.Declined
	case kindkit.StatusSubmitted:
	default:
		return false
	}
	if req.Declined || len(req.Values) == 0 {
		return false
	}
	values := req.Values
	if k, ok := h.eng.AskedKind(p); ok {
		if spec, err := k.LoadSpec(p.Spec); err == nil {
			if canonical, errs := k.Validate(&spec, req.Values); len(errs) == 0 {
				values = canonical
			}
		}
	}
	return equalJSON(values, o.Values)
}

func equalJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// toolArguments is a call's arguments as JSON: as given when they are,
// else as a JSON string.
func toolArguments(args string) json.RawMessage {
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}

func (h *Handler) failed(w http.ResponseWriter, err error) {
	if errors.Is(err, agent.ErrKindNotHosted) {
		problem(w, http.StatusServiceUnavailable, "kind_not_hosted", "this server does not host the card's kind")
		return
	}
	h.log.Error("link: answer", "err", err)
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
