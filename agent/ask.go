package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/store"
)

// asker is the kindkit.Asker of one run of a host tool call. Asks the call
// made in earlier runs return their stored answers, in order; the first new
// one is a question for the person, and every Ask after it parks too.
type asker struct {
	t    *turn
	call store.ToolCall

	mu       sync.Mutex
	answers  []string  // the payloads of the call's earlier Asks
	next     int       // the next earlier Ask
	cards    []opening // new questions, shown as cards (several: AskAll), with their deadline policies
	fallback string    // a new question, asked in conversation: the directive
	kind     string    // the new question's kind
	spec     json.RawMessage
	live     bool            // the new question is AskLive's
	memo     json.RawMessage // the call's checkpoint: kept from its earlier runs, or set by this one
	memoSet  bool            // Checkpoint was called in this run
	base     int             // answers[:base] were folded into this run's checkpoint
}

func (a *asker) Ask(ctx context.Context, kind string, spec json.RawMessage, reason string, o kindkit.AskOptions) (json.RawMessage, error) {
	return a.ask(kind, spec, reason, false, o.Deadline, o.To)
}

type liveKey struct{}

// AskLive is kindkit.Ask for a question whose answer goes to something the
// host tool holds open in this process while the turn is parked, such as
// an MCP server's call waiting on its elicitation (agent/mcp). It parks
// and replays like Ask; in addition the park records that only this
// process can take its answer, so when the process is gone the park
// resolves as lost (no_response) instead of showing a card nobody can
// answer, and the tool's next run says so. kind is a wire name and spec
// its JSON; the answer is the canonical values.
func AskLive(ctx context.Context, kind string, spec json.RawMessage, reason string) (json.RawMessage, error) {
	a, ok := ctx.Value(liveKey{}).(*asker)
	if !ok {
		return nil, fmt.Errorf("agent: ask %s: AskLive works inside a host tool call", kind)
	}
	return a.ask(kind, spec, reason, true, nil, "")
}

// Checkpoint keeps memo, an opaque value of the tool's own, as the host
// tool call's progress: when the call parks, memo is stored with the park,
// and every later run of the call (on any process, after any restart)
// reads it back with Memo. It stands in for the call's Asks answered so
// far in this run: their answers are dropped with the park, and the next
// run's Asks replay only the answers given after the checkpoint. So a tool
// whose work between questions must not run again (a call to a remote
// service, say) records its outcome in memo, and on its next run starts
// from memo instead of redoing it. A later Checkpoint in the same run
// replaces memo; a run that returns without parking ends the call, and
// its memo with it. Checkpoint works inside a host tool call.
func Checkpoint(ctx context.Context, memo json.RawMessage) error {
	a, ok := ctx.Value(liveKey{}).(*asker)
	if !ok {
		return errors.New("agent: Checkpoint works inside a host tool call")
	}
	if !json.Valid(memo) {
		return errors.New("agent: Checkpoint: the memo is not JSON")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.memo, a.memoSet, a.base = slices.Clone(memo), true, a.next
	return nil
}

// Memo is the memo of the host tool call's latest Checkpoint, made by an
// earlier run of the call (or by this run), or nil.
func Memo(ctx context.Context) json.RawMessage {
	a, ok := ctx.Value(liveKey{}).(*asker)
	if !ok {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.memo)
}

func (a *asker) ask(kind string, spec json.RawMessage, reason string, live bool, deadline *kindkit.Deadline, to string) (json.RawMessage, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.cards) > 0 || a.fallback != "" {
		return nil, kindkit.ErrParked // one question at a time
	}
	if a.next < len(a.answers) {
		a.next++
		return payloadValues(a.answers[a.next-1])
	}
	conv, err := a.t.conversation()
	if err != nil {
		return nil, fmt.Errorf("ask %s: %w", kind, err)
	}
	if _, err := a.open(conv, kindkit.AskRequest{Kind: kind, Spec: spec, Reason: reason, Options: kindkit.AskOptions{Deadline: deadline, To: to}}, true); err != nil {
		return nil, err
	}
	a.live = live
	return nil, kindkit.ErrParked
}

// AskAll asks several questions at once (kindkit.AskAll): the answers
// stored for them, in order, once every one is settled; else their cards
// open, all together when the conversation declared ParallelAsks and can
// show each (a group: the turn resumes once the last is settled), else
// the first one left alone, as Ask would, and the others after it.
func (a *asker) AskAll(ctx context.Context, qs []kindkit.AskRequest) ([]kindkit.AskResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.cards) > 0 || a.fallback != "" {
		return nil, kindkit.ErrParked
	}
	var results []kindkit.AskResult
	for len(results) < len(qs) && a.next < len(a.answers) {
		a.next++
		values, err := payloadValues(a.answers[a.next-1])
		if err != nil && !errors.Is(err, kindkit.ErrDeclined) && !errors.Is(err, kindkit.ErrNoResponse) {
			return nil, err
		}
		results = append(results, kindkit.AskResult{Values: values, Err: err})
	}
	if len(results) == len(qs) {
		return results, nil
	}
	conv, err := a.t.conversation()
	if err != nil {
		return nil, fmt.Errorf("ask: %w", err)
	}
	rest := qs[len(results):]
	for i, q := range rest {
		card, err := a.open(conv, q, i == 0)
		if err != nil {
			a.cards, a.fallback = nil, ""
			return nil, err
		}
		if !card || !supported(conv, ParallelAsks) {
			break // one at a time: the next opens after this one's answer
		}
	}
	return nil, kindkit.ErrParked
}

// open readies question q as a card of this run (card true), or, when
// first and the conversation cannot show its kind, as the conversational
// directive; a question after the first that cannot be a card is left for
// a later run (card false, nothing readied).
func (a *asker) open(conv *store.Conversation, q kindkit.AskRequest, first bool) (card bool, err error) {
	kind := q.Kind
	k, ok := a.t.eng.cfg.Catalog.Kind(kind)
	if !ok {
		return false, fmt.Errorf("ask: unknown interaction kind '%s'", kind)
	}
	var args map[string]any
	if err := json.Unmarshal(q.Spec, &args); err != nil || args == nil {
		return false, fmt.Errorf("ask %s: the spec must be a JSON object", kind)
	}
	args["reason"] = q.Reason
	raw, err := json.Marshal(args)
	if err != nil {
		return false, fmt.Errorf("ask %s: %w", kind, err)
	}
	r, err := k.ParseRaise(raw)
	if err != nil {
		return false, fmt.Errorf("ask %s: %w", kind, err)
	}
	policy, err := a.t.eng.policy(k, &r.Spec, q.Options.Deadline)
	if err != nil {
		return false, fmt.Errorf("ask %s: %w", kind, err) // refused now, never discovered at expiry
	}
	if supported(conv, k.Descriptor().Capability) {
		a.cards = append(a.cards, opening{park: &store.Park{Type: store.ParkInteraction, Kind: kind, Spec: r.Spec.JSON, Reason: r.Reason, ToolCall: a.call},
			spec: &r.Spec, expiry: policy, addressee: cmp.Or(q.Options.To, k.Descriptor().Addressee)}) // the Ask's, else the kind's
		return true, nil
	}
	if first {
		a.kind, a.spec = kind, r.Spec.JSON
		a.fallback = k.Fallback(r.Spec, r.Reason)
	}
	return false, nil
}

// payloadValues is an Ask's answer from its stored payload.
func payloadValues(payload string) (json.RawMessage, error) {
	var p struct {
		Status kindkit.Status  `json:"status"`
		Values json.RawMessage `json:"values"`
	}
	if err := json.Unmarshal([]byte(payload), &p); err != nil {
		return nil, fmt.Errorf("ask: stored answer: %w", err)
	}
	switch p.Status {
	case kindkit.StatusSubmitted:
		return p.Values, nil
	case kindkit.StatusDeclined:
		return nil, kindkit.ErrDeclined
	default:
		return nil, kindkit.ErrNoResponse
	}
}

// callHost runs a host tool call with an asker. When one of its Asks
// became a card, the turn parks on it (whatever the tool returned); when
// one went the conversational way, the call's result is the kind's
// directive and submit_interaction of that kind will run the call again.
// Otherwise the call is done and its Asks are forgotten.
func (t *turn) callHost(ht HostTool, call store.ToolCall) (parked bool, r Result, err error) {
	if t.state.AskGroup != "" {
		if err := t.gatherAnswers(call); err != nil {
			return false, Result{}, err
		}
	}
	a := &asker{t: t, call: call, answers: t.state.Asked[call.ID], memo: t.state.Memos[call.ID]}
	r = t.runHost(ht, call, a)
	if len(a.cards) > 0 || a.fallback != "" {
		a.keep(&t.state)
	}
	switch {
	case len(a.cards) > 0:
		t.state.Asking = call.ID
		t.state.Live = ""
		if a.live {
			t.state.Live = t.eng.owner
		}
		t.opening = a.cards
		parked, err = t.parkAll()
		return parked, Result{}, err
	case a.fallback != "":
		t.state.stash(a.kind, a.spec)
		if t.state.AskedBy == nil {
			t.state.AskedBy = map[string]store.ToolCall{}
		}
		t.state.AskedBy[a.kind] = call
		return false, Result{Text: a.fallback}, nil
	}
	if _, ok := t.state.Asked[call.ID]; ok {
		t.state.Asked = maps.Clone(t.state.Asked)
		delete(t.state.Asked, call.ID)
	}
	if _, ok := t.state.Memos[call.ID]; ok {
		t.state.Memos = maps.Clone(t.state.Memos)
		delete(t.state.Memos, call.ID)
	}
	return false, r, nil
}

// gatherAnswers records in the turn's state the answers to the Asks of
// call that a group of cards took (AskAll), in the order asked: each was
// stored by its own take, and the last take resumed the turn, so all are
// in the store now, whichever process took them. An Ask whose card ended
// without an outcome reads as no_response.
func (t *turn) gatherAnswers(call store.ToolCall) error {
	s := &t.state
	ended, err := t.eng.cfg.Store.EndedParks(t.ctx, t.session.ConversationID, s.AskSince, "", maxAskAll)
	if err != nil {
		return fmt.Errorf("ask: read the answers: %w", err)
	}
	answers := map[int]string{}
	last := -1
	for _, p := range ended {
		ps, err := stateOf(p)
		if p.Group != s.AskGroup || err != nil || ps.AskAt == nil {
			continue
		}
		answers[*ps.AskAt] = string(p.Outcome)
		last = max(last, *ps.AskAt)
	}
	base := len(s.Asked[call.ID])
	got := slices.Clone(s.Asked[call.ID])
	for at := base; at <= last; at++ {
		payload, ok := answers[at]
		if !ok {
			payload = kindkit.NoResponse().JSON()
		}
		got = append(got, payload)
	}
	s.Asked = maps.Clone(s.Asked)
	if s.Asked == nil {
		s.Asked = map[string][]string{}
	}
	s.Asked[call.ID] = got
	s.AskGroup, s.AskSince, s.AskAt = "", time.Time{}, nil
	return nil
}

// maxAskAll bounds the questions of one AskAll that open together.
const maxAskAll = 64

// keep records in state the checkpoint of a run that parks: its memo, and
// in place of the call's answers only those given after it.
func (a *asker) keep(state *turnState) {
	if !a.memoSet {
		return
	}
	state.Memos = maps.Clone(state.Memos)
	if state.Memos == nil {
		state.Memos = map[string]json.RawMessage{}
	}
	state.Memos[a.call.ID] = a.memo
	state.Asked = maps.Clone(state.Asked)
	if state.Asked == nil {
		state.Asked = map[string][]string{}
	}
	state.Asked[a.call.ID] = slices.Clone(a.answers[a.base:])
}

// answerAsk records the payload of an Ask of call in state: the call runs
// again next, and its Ask returns it.
func answerAsk(state *turnState, call store.ToolCall, payload string) {
	asked := maps.Clone(state.Asked)
	if asked == nil {
		asked = map[string][]string{}
	}
	asked[call.ID] = append(slices.Clone(asked[call.ID]), payload)
	state.Asked = asked
	state.Asking, state.Live = "", ""
	state.Pending = append([]store.ToolCall{call}, state.Pending...)
}
