package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/kindkit/kindkit"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/store"
)

// A turn is one send_message and everything it causes, until its terminal
// event. While it runs it has a goroutine; while it is parked it is only the
// park record in the store (and, for speed, this struct in its
// connection's slot).
type turn struct {
	srv       *Server
	conn      *conn // nil when no connection follows the turn (it still finishes)
	session   *store.Session
	requestID string
	ctx       context.Context
	cancel    context.CancelFunc
	state     store.TurnState
	parkID    string // set while parked
	parkType  store.ParkKind

	// Read from the store once per run of the turn, then kept up to date
	// by the turn itself: the conversation (capabilities are read at the
	// start of a turn) and the model's view of its history.
	conv *store.Conversation
	log  []*store.Message
}

const (
	deniedResult       = "Denied by human: user rejected the action"
	submitToolName     = "submit_interaction"
	submitToolSchema   = `{"type":"object","properties":{"kind":{"type":"string","enum":%s,"description":"The interaction kind whose fallback you followed."},"values":{"type":"object","description":"The values the visitor gave, shaped as the fallback instructions say."},"declined":{"type":"boolean","description":"True when the visitor refused to answer."}},"required":["kind"]}`
	submitToolDescribe = "Submit what the visitor told you in conversation for an interaction whose card this channel cannot show. The values are checked; on errors, re-ask the visitor and submit again."
)

func (s *Server) newTurn(c *conn, sess *store.Session, state store.TurnState) *turn {
	ctx, cancel := context.WithCancel(context.Background())
	return &turn{srv: s, conn: c, session: sess, requestID: state.RequestID, ctx: ctx, cancel: cancel, state: state}
}

// start stores the person's message, looks up the knowledge for it, and
// runs the turn.
func (t *turn) start(userMessage *store.Message) {
	t.goRun(func() {
		t.state.Citations = t.srv.cite(userMessage.Text)
		if err := t.srv.cfg.Store.AppendMessages(t.ctx, userMessage); err != nil {
			t.fail(err)
			return
		}
		t.run()
	})
}

// goRun runs the turn on its own goroutine; a panic ends the turn with
// INTERNAL_ERROR, not the process.
func (t *turn) goRun(fn func()) {
	t.srv.turns.Add(1)
	go func() {
		defer t.srv.turns.Done()
		defer func() {
			if r := recover(); r != nil {
				t.srv.log.Error("turn panicked", "requestId", t.requestID, "panic", r)
				t.fail(fmt.Errorf("panic: %v", r))
			}
		}()
		fn()
	}()
}

func (t *turn) emit(ev event) {
	if t.conn != nil {
		t.conn.emit(t, ev)
	}
}

// fail ends the turn with INTERNAL_ERROR; details stay in the log.
func (t *turn) fail(err error) {
	if t.ctx.Err() != nil {
		return // cancelled or disconnected: nobody is waiting for an answer
	}
	t.srv.log.Error("turn failed", "requestId", t.requestID, "err", err)
	if t.conn != nil {
		t.conn.finish(t, errorEvent(t.requestID, codeInternal, msgInternal))
	}
	t.cancel()
}

// run is the agent loop: answer the pending tool calls, call the model, and
// again, until the model answers without tools or a tool parks the turn.
func (t *turn) run() {
	db := t.srv.cfg.Store
	for {
		for len(t.state.Pending) > 0 {
			if t.ctx.Err() != nil {
				return
			}
			call := t.state.Pending[0]
			t.state.Pending = t.state.Pending[1:]
			parked, err := t.runTool(call)
			if err != nil {
				t.fail(err)
				return
			}
			if parked {
				return
			}
		}
		if t.ctx.Err() != nil {
			return
		}
		conv, err := t.conversation()
		if err != nil {
			t.fail(err)
			return
		}
		history, err := t.history()
		if err != nil {
			t.fail(err)
			return
		}
		resp, err := t.srv.cfg.Model.Respond(t.ctx, agent.ModelRequest{
			ConversationID: conv.ID, Position: conv.ModelPos, History: history, Tools: t.tools(conv),
			Knowledge: t.srv.documents(t.state.Citations),
		}, func(text string) {
			if text != "" {
				t.emit(tokenEvent(t.requestID, text))
			}
		})
		if t.ctx.Err() != nil {
			return
		}
		if err != nil {
			t.fail(fmt.Errorf("model: %w", err))
			return
		}
		if resp.Position != conv.ModelPos {
			if err := db.SetModelPos(t.ctx, conv.ID, resp.Position); err != nil {
				t.fail(err)
				return
			}
			conv.ModelPos = resp.Position
		}
		t.state.Text += resp.Text
		t.state.Usage = t.state.Usage.Add(resp.Usage)
		for i := range resp.ToolCalls {
			if resp.ToolCalls[i].ID == "" {
				resp.ToolCalls[i].ID = "call-" + uuid.NewString()
			}
		}
		var said *store.Message
		if resp.Text != "" || len(resp.ToolCalls) > 0 {
			said = &store.Message{ID: uuid.NewString(), ConversationID: conv.ID,
				Role: store.RoleAssistant, Text: resp.Text, ToolCalls: resp.ToolCalls, CreatedAt: time.Now().UTC()}
		}
		if len(resp.ToolCalls) == 0 {
			t.complete(said)
			return
		}
		if err := t.write(said); err != nil {
			t.fail(err)
			return
		}
		t.state.Pending = resp.ToolCalls
	}
}

// conversation is the turn's conversation, read once.
func (t *turn) conversation() (*store.Conversation, error) {
	if t.conv == nil {
		conv, err := t.srv.cfg.Store.Conversation(t.ctx, t.session.ConversationID)
		if err != nil {
			return nil, err
		}
		t.conv = conv
	}
	return t.conv, nil
}

// write stores messages and adds them to the model's view of the history.
func (t *turn) write(msgs ...*store.Message) error {
	if err := t.srv.cfg.Store.AppendMessages(t.ctx, msgs...); err != nil {
		return err
	}
	if t.log != nil {
		for _, m := range msgs {
			if m.Role != store.RoleReply {
				t.log = append(t.log, m)
			}
		}
		if extra := len(t.log) - historyLimit; extra > 0 {
			t.log = t.log[extra:]
		}
	}
	return nil
}

// complete stores the model's last words and the reply in one write and
// sends eventual_response.
func (t *turn) complete(said *store.Message) {
	reply := &store.Message{ID: uuid.NewString(), ConversationID: t.session.ConversationID, Role: store.RoleReply,
		Text: t.state.Text, CreatedAt: time.Now().UTC()}
	msgs := []*store.Message{reply}
	if said != nil {
		msgs = []*store.Message{said, reply}
	}
	if err := t.write(msgs...); err != nil {
		t.fail(err)
		return
	}
	ev := eventualEvent(t.requestID, eventualPayload{
		MessageID: reply.ID,
		Response: replyResponse{CustomerHappinessScore: 0.5, NeedsSatisfactionScore: 0.5, ResolutionStatus: "in_progress",
			ResponseParts: []string{t.state.Text}, SuggestedNextActions: []string{}},
		Usage:     usage{PromptTokens: t.state.Usage.PromptTokens, CompletionTokens: t.state.Usage.CompletionTokens},
		Citations: t.state.Citations,
	})
	if t.conn != nil {
		t.conn.finish(t, ev)
	}
	t.cancel()
}

// history is what the model sees: the last messages of the conversation,
// oldest first, without tool calls that never got a result (a cancelled
// turn's) so every call the model sees is answered.
func (t *turn) history() ([]*store.Message, error) {
	if t.log == nil {
		msgs, _, err := t.srv.cfg.Store.Messages(t.ctx, t.session.ConversationID,
			[]store.Role{store.RoleUser, store.RoleAssistant, store.RoleTool}, "", historyLimit)
		if err != nil {
			return nil, err
		}
		slices.Reverse(msgs)
		t.log = msgs
	}
	msgs := slices.Clone(t.log)
	answered := map[string]bool{}
	for _, m := range msgs {
		if m.Role == store.RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	out := msgs[:0]
	for i, m := range msgs {
		if m.Role == store.RoleTool && (i == 0 || !hasCall(msgs[:i], m.ToolCallID)) {
			continue // its call fell outside the window
		}
		if m.Role == store.RoleAssistant && len(m.ToolCalls) > 0 {
			cp := *m
			cp.ToolCalls = slices.DeleteFunc(slices.Clone(m.ToolCalls), func(c store.ToolCall) bool { return !answered[c.ID] })
			if cp.Text == "" && len(cp.ToolCalls) == 0 {
				continue
			}
			m = &cp
		}
		out = append(out, m)
	}
	return out, nil
}

func hasCall(msgs []*store.Message, id string) bool {
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if c.ID == id {
				return true
			}
		}
	}
	return false
}

// supported tells whether the conversation declared a capability.
func supported(conv *store.Conversation, capability string) bool {
	return capability != "" && slices.Contains(conv.Supports, capability)
}

// tools are the host tools, then one raise tool per kind, then
// submit_interaction when some kind is on the conversational path.
func (t *turn) tools(conv *store.Conversation) []agent.Tool {
	var tools []agent.Tool
	for _, ft := range t.srv.cfg.Tools {
		tools = append(tools, ft.Tool)
	}
	var fallback []string
	for _, k := range t.srv.cfg.Catalog.Kinds() {
		d := k.Descriptor()
		tools = append(tools, agent.Tool{Name: d.ToolName, Description: d.ToolDescription, Parameters: json.RawMessage(d.ToolSchema)})
		if !supported(conv, d.Capability) {
			fallback = append(fallback, d.Name)
		}
	}
	if len(fallback) > 0 {
		enum, _ := json.Marshal(fallback)
		tools = append(tools, agent.Tool{Name: submitToolName, Description: submitToolDescribe,
			Parameters: json.RawMessage(fmt.Sprintf(submitToolSchema, enum))})
	}
	return tools
}

type toolResult struct {
	text    string
	isError bool
}

// runTool runs one tool call: it emits the call chunk and the result chunk
// and stores the result, or parks the turn.
func (t *turn) runTool(call store.ToolCall) (parked bool, err error) {
	s := t.srv
	if k, ok := s.cfg.Catalog.ByTool(call.Name); ok {
		return t.raise(k, call)
	}
	if call.Name == submitToolName {
		t.emit(toolCallChunk(t.requestID, call.Name, call.Arguments))
		return false, t.answer(call, t.submitTool(call))
	}
	for _, ft := range s.cfg.Tools {
		if ft.Name != call.Name {
			continue
		}
		if t.gated(call.Name) {
			return t.park(&store.Park{Type: store.ParkConfirmation, ToolCall: call})
		}
		t.emit(toolCallChunk(t.requestID, call.Name, call.Arguments))
		return false, t.answer(call, toolResult{text: ft.Result})
	}
	t.emit(toolCallChunk(t.requestID, call.Name, call.Arguments))
	return false, t.answer(call, toolResult{text: fmt.Sprintf("unknown tool '%s'", call.Name), isError: true})
}

func (t *turn) gated(name string) bool {
	for _, sub := range t.srv.cfg.ConfirmTools {
		if sub != "" && strings.Contains(name, sub) {
			return true
		}
	}
	return false
}

// answer stores a tool result and emits its chunk.
func (t *turn) answer(call store.ToolCall, r toolResult) error {
	err := t.write(&store.Message{ID: uuid.NewString(), ConversationID: t.session.ConversationID,
		Role: store.RoleTool, Text: r.text, ToolCallID: call.ID, ToolName: call.Name, IsError: r.isError, CreatedAt: time.Now().UTC()})
	if err != nil {
		return err
	}
	t.emit(toolResultChunk(t.requestID, call.Name, r.text, r.isError))
	return nil
}

// raise handles a kind's raise tool: a tool error when the arguments are
// wrong, the card when the conversation declared the capability, the
// conversational fallback otherwise.
func (t *turn) raise(k kindkit.Kind, call store.ToolCall) (bool, error) {
	d := k.Descriptor()
	r, err := k.ParseRaise([]byte(call.Arguments))
	if err != nil {
		t.emit(toolCallChunk(t.requestID, call.Name, call.Arguments))
		return false, t.answer(call, toolResult{text: err.Error(), isError: true})
	}
	conv, err := t.conversation()
	if err != nil {
		return false, err
	}
	if !supported(conv, d.Capability) {
		t.state.Stash(d.Name, r.Spec.JSON)
		t.emit(toolCallChunk(t.requestID, call.Name, call.Arguments))
		return false, t.answer(call, toolResult{text: k.Fallback(r.Spec, r.Reason)})
	}
	return t.park(&store.Park{Type: store.ParkInteraction, Kind: d.Name, Spec: r.Spec.JSON, Reason: r.Reason, ToolCall: call})
}

// park stores the turn as a park, then emits the prompt and the deferred
// call chunk. The turn's goroutine ends; a submit, a confirmation, the
// deadline or a drain resumes it from the store.
func (t *turn) park(p *store.Park) (bool, error) {
	s := t.srv
	db := s.cfg.Store
	if p.ID == "" {
		p.ID = uuid.NewString()
	}
	p.ConversationID = t.session.ConversationID
	p.SessionID = t.session.ID
	p.Deadline = time.Now().Add(s.cfg.ParkTimeout)
	p.State = store.ParkPending
	p.Turn = t.state
	p.Turn.Pending = slices.Clone(t.state.Pending)
	// The newest raise wins: the store drops an older park of the
	// conversation, and its turn lets go of its connection's slot.
	replaced, err := db.SavePark(t.ctx, p)
	if err != nil {
		return false, err
	}
	if replaced != "" {
		s.claimParked(replaced)
	}
	if t.conn == nil {
		return true, nil
	}
	t.conn.mu.Lock()
	switch {
	case t.conn.active != t:
		// Cancelled while parking: the park must not outlive the turn.
		t.conn.mu.Unlock()
		db.TakePark(context.Background(), p.ID, store.ParkCancelled)
		return true, nil
	case t.conn.draining && s.cfg.KeepParksOnDrain:
		// The process is going away; the park waits in the store for a
		// client of the next one.
		t.conn.active = nil
		t.conn.signalIdleLocked()
		t.conn.mu.Unlock()
		return true, nil
	case t.conn.draining:
		// The process is going away with its memory: nobody can answer
		// the card, so the turn goes on without it.
		t.conn.mu.Unlock()
		taken, ok, err := db.TakePark(t.ctx, p.ID, store.ParkExpired)
		if err != nil || !ok {
			return true, err
		}
		t.emit(toolCallChunk(t.requestID, p.ToolCall.Name, p.ToolCall.Arguments))
		return false, t.answer(p.ToolCall, s.expiredResult(taken))
	}
	t.parkID, t.parkType = p.ID, p.Type
	// A parked turn holds only what its slot needs: the resume reads the
	// rest from the store.
	t.conv, t.log = nil, nil
	t.cancel()
	s.mu.Lock()
	s.parked[p.ID] = t
	s.mu.Unlock()
	t.conn.enqueueLocked(prompt(p))
	t.conn.enqueueLocked(toolCallChunk(t.requestID, p.ToolCall.Name, p.ToolCall.Arguments))
	t.conn.mu.Unlock()
	return true, nil
}

// prompt is the event that shows a park to a person: the card, or the
// write confirmation.
func prompt(p *store.Park) event {
	if p.Type == store.ParkConfirmation {
		return nested("write_confirmation_required", p.Turn.RequestID, object{
			"toolId": p.ToolCall.Name, "actionDescription": fmt.Sprintf("Approve calling tool '%s'?", p.ToolCall.Name)})
	}
	return nested("interaction_required", p.Turn.RequestID, interactionPayload{InteractionID: p.ID, Kind: p.Kind, Reason: p.Reason, Spec: p.Spec})
}

// reattach shows a conversation's pending park to a client that resumed the
// conversation: with the kind's capability it gets the same card again and
// the parked turn becomes this connection's; without it the park is
// answered with the conversational fallback and the turn runs on here.
func (c *conn) reattach(ctx context.Context, sess *store.Session, conv *store.Conversation) {
	s := c.srv
	p, err := s.cfg.Store.PendingPark(ctx, conv.ID)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log.Error("load pending park", "conversationId", conv.ID, "err", err)
		}
		return
	}
	c.mu.Lock()
	busy := c.active != nil
	c.mu.Unlock()
	if busy {
		return
	}
	if p.Type == store.ParkInteraction {
		k, ok := s.cfg.Catalog.Kind(p.Kind)
		if !ok {
			return
		}
		if !supported(conv, k.Descriptor().Capability) {
			spec, err := k.LoadSpec(p.Spec)
			if err != nil {
				s.log.Error("load parked spec", "interactionId", p.ID, "err", err)
				return
			}
			taken, ok, err := s.cfg.Store.TakePark(ctx, p.ID, store.ParkResolved)
			if err != nil || !ok {
				return
			}
			taken.Turn.Stash(p.Kind, p.Spec)
			s.resume(c, sess, taken, toolResult{text: k.Fallback(spec, p.Reason)})
			return
		}
	}
	t := s.newTurn(c, sess, p.Turn)
	t.parkID, t.parkType = p.ID, p.Type
	s.mu.Lock()
	old := s.parked[p.ID]
	s.parked[p.ID] = t
	s.mu.Unlock()
	if old != nil && old.conn != nil && old.conn != c {
		old.conn.release(old)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.active == nil {
		c.active = t
		c.enqueueLocked(prompt(p))
	}
}

// resume continues a taken park's turn with result, as session sess (nil:
// the park's own), on connection c, or
// when c is nil on the connection the turn was parked on, if it is still
// there; otherwise the turn finishes with nobody listening. The caller has already queued
// any acknowledgement, so it reaches the wire before the resumed stream.
func (s *Server) resume(c *conn, sess *store.Session, p *store.Park, r toolResult) {
	old := s.unpark(p.ID)
	var owner *conn
	if old != nil {
		owner = old.conn
	}
	if c == nil {
		c = owner
	}
	if owner != nil && owner != c {
		owner.release(old)
	}
	if sess == nil {
		var err error
		if sess, err = s.cfg.Store.Session(context.Background(), p.SessionID); err != nil {
			s.log.Error("resume: load session", "interactionId", p.ID, "err", err)
			if c != nil {
				c.release(old)
			}
			return
		}
	}
	t := s.newTurn(c, sess, p.Turn)
	if c != nil {
		// The resumed turn takes the parked one's slot in one step, so a
		// drain waiting for the slot to empty waits for the resumed turn.
		c.mu.Lock()
		if c.active == nil || c.active.parkID == p.ID {
			c.active = t
		} else {
			t.conn = nil // the connection is busy with another turn
		}
		c.mu.Unlock()
	}
	t.goRun(func() {
		if err := t.answer(p.ToolCall, r); err != nil {
			t.fail(err)
			return
		}
		t.run()
	})
}

// submitTool is the generic submit_interaction tool of the conversational
// path: the same validation and payload as the card.
func (t *turn) submitTool(call store.ToolCall) toolResult {
	var args struct {
		Kind     string          `json:"kind"`
		Values   json.RawMessage `json:"values"`
		Declined bool            `json:"declined"`
	}
	if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil {
		return toolResult{text: "invalid arguments: " + err.Error(), isError: true}
	}
	k, ok := t.srv.cfg.Catalog.Kind(args.Kind)
	if !ok {
		return toolResult{text: fmt.Sprintf("unknown interaction kind '%s'", args.Kind), isError: true}
	}
	if args.Declined {
		return toolResult{text: kindkit.Payload{Status: kindkit.StatusDeclined, Message: kindkit.ConversationDeclinedMsg}.JSON()}
	}
	var spec *kindkit.Spec
	if raw, ok := t.state.Stashed[args.Kind]; ok {
		if sp, err := k.LoadSpec(json.RawMessage(raw)); err == nil {
			spec = &sp
		}
	}
	if len(args.Values) == 0 {
		args.Values = json.RawMessage("null")
	}
	values, errs := k.Validate(spec, args.Values)
	if len(errs) > 0 {
		parts := make([]string, len(errs))
		for i, e := range errs {
			parts[i] = e.Field + ": " + e.Message
		}
		return toolResult{text: "validation failed — " + strings.Join(parts, "; ") +
			". Re-ask the visitor for the corrected value(s) and submit again", isError: true}
	}
	t.srv.hostEffect(t.ctx, t.session.ID, args.Kind, values)
	return toolResult{text: kindkit.Submitted(values).JSON()}
}

// hostEffect runs what the host does with valid values: an identity
// intake's contact is stamped on the session. Errors never fail the turn.
func (s *Server) hostEffect(ctx context.Context, sessionID, kind string, values json.RawMessage) {
	if kind != "identity_intake" {
		return
	}
	var v struct{ Name, Email, Phone string }
	if json.Unmarshal(values, &v) != nil {
		return
	}
	if err := s.cfg.Store.SetContact(ctx, sessionID, v.Name, v.Email, v.Phone); err != nil {
		s.log.Warn("stamp contact on session", "sessionId", sessionID, "err", err)
	}
}
