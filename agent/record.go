package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/kindkit/kindkit/store"
)

// The paths by which an ask ends (Record.Via).
const (
	ViaCard     = "card"     // a person answered it through a transport (Submit, Confirm)
	ViaLink     = "link"     // a person answered it through a one-time answer link (ByLink)
	ViaInbox    = "inbox"    // a person answered it from their inbox, outside the conversation (ByInbox)
	ViaTool     = "tool"     // its host tool answered it from outside the call (Answerer: an MCP server's completion notice)
	ViaWords    = "words"    // its own session wrote a message instead, naming it (Message.Withdraw)
	ViaWithdraw = "withdraw" // another session's message withdrew it
	ViaDeadline = "deadline" // its deadline passed
	ViaCancel   = "cancel"   // its turn was stopped (Cancel)
	ViaDrain    = "drain"    // its process went away with it (Drain)
	ViaFallback = "fallback" // the conversation cannot show it: the kind's fallback answered for the person
	ViaLost     = "lost"     // its question was held open by a process that is gone
	// ViaKindChanged: its kind changed in a deploy after it was asked,
	// and neither the version that asked it is kept nor does the kind
	// upgrade its answers (Catalog.KeepEarlier, kindkit.Upgrader).
	ViaKindChanged = "kind_changed"
)

// What raised an ask (Record.Asked).
const (
	AskedByModel        = "model"        // a kind's raise tool, called by the model
	AskedByTool         = "ask"          // a host tool's Ask (an MCP server's elicitation too)
	AskedByConfirmation = "confirmation" // a gated tool's call, to approve or reject
)

// Record is who ended an ask, when, by which path and in which process,
// and for a tool call the decision and the arguments it was asked about.
// The engine writes it with the take that ends the ask, so it is kept
// with the conversation (Engine.Records) and exported with the history;
// it holds no answer's values, and is never logged.
type Record struct {
	// By is the principal that ended it (WithPrincipal); empty for an
	// anonymous session, and when the engine ended it (a deadline, a
	// drain).
	By string `json:"by,omitempty"`
	// SessionID is the session that ended it; empty when the engine did.
	SessionID string    `json:"sessionId,omitempty"`
	At        time.Time `json:"at"`
	Via       string    `json:"via"`
	Asked     string    `json:"asked"`
	// Process is the engine that ended it: its lease owner's id, as its
	// leases and logs name it.
	Process string `json:"process"`
	// Decision is a tool call's, when a person decided: approved,
	// edited, rejected or responded (Decide).
	Decision string `json:"decision,omitempty"`
	// Arguments are a tool call's, as the model gave them, and
	// EditedArguments those it ran with when the person edited them.
	Arguments       json.RawMessage `json:"arguments,omitempty"`
	EditedArguments json.RawMessage `json:"editedArguments,omitempty"`
}

// A person's decisions on a tool call, as a Record names them.
const (
	decisionApproved  = "approved"
	decisionEdited    = "edited"
	decisionRejected  = "rejected"
	decisionResponded = "responded"
)

// decisionOf names the decision d (nil: Confirm's, told by r, empty when
// approved).
func decisionOf(d *Decided, r Result) string {
	switch {
	case d != nil && d.Decision == Edit:
		return decisionEdited
	case d != nil && d.Decision == Respond:
		return decisionResponded
	case r == (Result{}):
		return decisionApproved
	}
	return decisionRejected
}

// AskRecord is an ask that ended, as Engine.Records lists it.
type AskRecord struct {
	ID      string          // the interactionId
	Kind    string          // the kind asked; empty for a tool call's confirmation
	Tool    string          // the tool call that raised it, or that waited on it
	State   store.ParkState // how the park ended
	Outcome json.RawMessage // how the card ended, as the person is shown it
	AskedAt time.Time
	// Record is nil for an ask that ended before the store kept records.
	Record *Record
}

type principalKey struct{}

// WithPrincipal returns ctx naming principal (an authenticated subject)
// as the one who calls the engine with it: the record of an ask it ends
// says so.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

type pathKey struct{}

// ByLink returns ctx saying that the answer Submit or Decide is called
// with came through a one-time answer link rather than a session of the
// conversation: the record says so (ViaLink), and names no session, since
// the session passed is the conversation's, not the answerer's.
func ByLink(ctx context.Context) context.Context {
	return context.WithValue(ctx, pathKey{}, ViaLink)
}

// ByInbox is ByLink for an answer that came from its answerer's inbox
// (Engine.Inbox): the record says ViaInbox.
func ByInbox(ctx context.Context) context.Context {
	return context.WithValue(ctx, pathKey{}, ViaInbox)
}

// personPath is the path by which ctx's caller answers in person.
func personPath(ctx context.Context) string {
	if via, _ := ctx.Value(pathKey{}).(string); via != "" {
		return via
	}
	return ViaCard
}

type groupsKey struct{}

// WithGroups returns ctx naming the groups (a token's groups claim) of
// its principal (WithPrincipal): an ask addressed to "group:NAME" may be
// answered by a principal of group NAME.
func WithGroups(ctx context.Context, groups []string) context.Context {
	return context.WithValue(ctx, groupsKey{}, groups)
}

// GroupPrefix begins an addressee that names a group.
const GroupPrefix = "group:"

// MayAnswer says whether ctx's caller (WithPrincipal, WithGroups) may
// answer an ask addressed to to: anyone when to is empty, else the
// principal it names, or a principal of the group it names.
func MayAnswer(ctx context.Context, to string) bool {
	if to == "" {
		return true
	}
	if group, ok := strings.CutPrefix(to, GroupPrefix); ok {
		groups, _ := ctx.Value(groupsKey{}).([]string)
		return group != "" && principalOf(ctx) != "" && slices.Contains(groups, group)
	}
	return principalOf(ctx) == to
}

// AddressedTo is whom pending or ended park p is addressed to (an Ask's
// kindkit.AddressedTo, a confirmation's Config.ConfirmTo); "" when anyone
// of its conversation may answer it. A transport shows the card of an ask
// its caller may not answer (MayAnswer) read-only, waiting for it.
func (e *Engine) AddressedTo(p *store.Park) string {
	if p.Addressee != "" {
		return p.Addressee // saved with the park (stores since migration 12)
	}
	// A park saved before stores kept the column, ended since (pending
	// ones got it from their state when the store migrated), keeps its
	// addressee in its state only.
	if !bytes.Contains(p.Turn, addresseeKey) {
		return "" // most asks: no decode of the state on every prompt and answer
	}
	s, _ := stateOf(p) // an ended park's state may be gone: addressed to none then
	return s.Addressee
}

// addresseeKey is how turnState.Addressee begins in a park's state; in a
// JSON string's text its quotes would be escaped.
var addresseeKey = []byte(`"addressee":`)

func principalOf(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

// record is the record of park p, whose turn is s, ended via the path
// via by ctx's principal; actor is the session that ended it (nil when
// the engine did, or a Cancel that names none), and approved a
// confirmation's decision when a person made one.
func (e *Engine) record(ctx context.Context, p *store.Park, s turnState, via string, actor *store.Session, decision string) json.RawMessage {
	r := Record{At: e.clock.Now().UTC(), Via: via, Asked: AskedByModel, Process: e.owner}
	switch {
	case p.Type == store.ParkConfirmation:
		r.Asked = AskedByConfirmation
		r.Arguments = toolArguments(p.ToolCall.Arguments)
	case s.Asking != "":
		r.Asked = AskedByTool
	}
	r.By = principalOf(ctx)
	if actor != nil {
		r.SessionID = actor.ID
	}
	r.Decision = decision
	if d := decidedFrom(ctx); d != nil && d.Decision == Edit {
		r.EditedArguments = d.Arguments
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil // a Record always marshals
	}
	return b
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

// Records lists conversation conv's asks that ended with an outcome,
// oldest first: up to limit of those saved at or after since (the zero
// time: from the first) and, unless before is "", before message before
// (store.EndedParks pages them so). It is the record of who ended each,
// when, how and where, kept with the conversation.
func (e *Engine) Records(ctx context.Context, conv string, since time.Time, before string, limit int) ([]AskRecord, error) {
	parks, err := e.cfg.Store.EndedParks(ctx, conv, since, before, limit)
	if err != nil {
		return nil, err
	}
	out := make([]AskRecord, 0, len(parks))
	for _, p := range parks {
		out = append(out, AskRecordOf(p))
	}
	return out, nil
}

// AskRecordOf is ended park p as a record; a record that cannot be read
// is left out (Record nil).
func AskRecordOf(p *store.Park) AskRecord {
	a := AskRecord{ID: p.ID, Kind: p.Kind, Tool: p.ToolCall.Name, State: p.State, Outcome: p.Outcome, AskedAt: p.CreatedAt}
	if p.Type == store.ParkConfirmation {
		a.Kind = ""
	}
	if len(p.Record) > 0 {
		var r Record
		if json.Unmarshal(p.Record, &r) == nil {
			a.Record = &r
		}
	}
	return a
}

// AskEndedError is Submit's and Confirm's error for an answer that came
// after its ask ended: answered (here or elsewhere), declined, expired,
// withdrawn or stopped. It says what happened and when, for as long as
// the store keeps the ask (store.EndedPark); an ask it no longer knows is
// just not pending (ok false, no error).
type AskEndedError struct {
	ID string
	// Status is the outcome's: submitted, declined, no_response,
	// withdrawn, cancelled, approved or denied.
	Status string
	// At is when it ended, and Via how (Record); zero for an ask that
	// ended before the store kept records.
	At  time.Time
	Via string
}

// endedWords are what became of an ask, by its outcome's status.
var endedWords = map[string]string{
	"submitted":   "was answered",
	"declined":    "was declined",
	"no_response": "expired",
	"withdrawn":   "was withdrawn: a message came instead",
	"cancelled":   "was stopped",
	"approved":    "was approved",
	"denied":      "was rejected",
}

func (e *AskEndedError) Error() string {
	what := endedWords[e.Status]
	if what == "" {
		what = "ended"
	}
	msg := "this card " + what
	if !e.At.IsZero() {
		msg += " at " + e.At.UTC().Format(time.RFC3339)
	}
	switch e.Via {
	case ViaDeadline, ViaDrain:
		msg += fmt.Sprintf(" (%s)", e.Via)
	case ViaKindChanged:
		msg += " (kind changed)"
	case ViaLink:
		msg += " (by an answer link)"
	case ViaInbox:
		msg += " (from an inbox)"
	}
	return msg
}

// Ended says what became of ask id of conversation conv when it is no
// longer pending: an *AskEndedError, or nil when the store does not know
// it (or it still waits, or ctx's caller may not answer it: MayAnswer).
func (e *Engine) Ended(ctx context.Context, conv, id string) (*AskEndedError, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, nil // no ask was ever named so
	}
	p, err := e.cfg.Store.EndedPark(ctx, conv, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !MayAnswer(ctx, e.AddressedTo(p)) {
		return nil, nil // not the caller's: as if there were none
	}
	var o struct {
		Status string `json:"status"`
	}
	_ = json.Unmarshal(p.Outcome, &o) // an outcome is always an object with a status
	ended := &AskEndedError{ID: id, Status: o.Status}
	if r := AskRecordOf(p).Record; r != nil {
		ended.At, ended.Via = r.At, r.Via
	}
	return ended, nil
}

// late is Submit's and Confirm's result for an answer to ask id that
// found it not pending: false, with what became of it when the store
// knows.
func (e *Engine) late(ctx context.Context, conv, id string) (bool, error) {
	ended, err := e.Ended(ctx, conv, id)
	if ended != nil {
		return false, ended
	}
	return false, err
}
