package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/kindkit/kindkit/internal/stack"

	"github.com/google/uuid"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/store"
)

// dispatch handles one text frame on the reader goroutine. A connection
// whose token has expired acts anonymously from then on.
func (c *conn) dispatch(ctx context.Context, data []byte) {
	if !c.principal.Expires.IsZero() && !c.srv.clock.Now().Before(c.principal.Expires) {
		c.principal = Principal{}
		c.identity.Store(nil)
	}
	if c.principal.Sub != "" {
		ctx = agent.WithPrincipal(ctx, c.principal.Sub) // the record of an ask this frame ends names it
		ctx = agent.WithGroups(ctx, c.principal.Groups) // an ask addressed to a group of theirs is theirs to answer
	}
	f, supports, err := decodeFrame(data)
	if err != nil {
		c.send(errorEvent("", codeValidation, msgInvalidJSON))
		return
	}
	if len(f.RequestID) > maxRequestID {
		c.send(errorEvent("", codeValidation, fmt.Sprintf("'requestId' is longer than %d bytes", maxRequestID)))
		return
	}
	switch f.Action {
	case "":
		c.send(errorEvent(f.RequestID, codeValidation, "Missing 'action'"))
	case "ping":
		c.send(pongEvent(f.RequestID))
	case "create_conversation_session":
		c.createSession(ctx, f, supports)
	case "get_session":
		c.getSession(ctx, f)
	case "send_message":
		c.sendMessage(ctx, f)
	case "submit_interaction":
		c.submitInteraction(ctx, f)
	case "cancel":
		c.cancelTurn(ctx, f)
	case "get_conversation_messages":
		c.getMessages(ctx, f)
	case "confirm_tool_action":
		c.confirmToolAction(ctx, f)
	case "list_conversations":
		c.listConversations(ctx, f)
	case "verify_otp":
		c.verifyOTP(ctx, f)
	default:
		c.send(errorEvent(f.RequestID, codeUnsupportedAction, fmt.Sprintf("Unsupported action '%s'", cut(f.Action, maxEchoedAction))))
	}
}

func (c *conn) internalError(requestID string, err error, what string) {
	c.srv.log.Error(what, "requestId", requestID, "err", err)
	c.send(errorEvent(requestID, codeInternal, msgInternal))
}

func (c *conn) createSession(ctx context.Context, f *frame, supports []string) {
	if f.KeepTurns {
		c.keepTurns = true // for the connection: its turns are what it keeps
	}
	if ext := declaredExtensions(supports); ext != 0 {
		c.ext.Or(uint32(ext))
	}
	agentID := strings.TrimSpace(f.AgentID)
	if agentID == "" {
		c.send(errorEvent(f.RequestID, codeValidation, "Missing 'agentId'"))
		return
	}
	var conv *store.Conversation
	if f.ConversationID != "" {
		existing, err := c.findConversation(ctx, f.ConversationID)
		switch {
		case err == nil && c.visible(existing):
			conv = existing
		case err == nil:
			// Not the caller's: start a fresh conversation, as for an
			// unknown id, so nothing tells the two apart.
		case !errors.Is(err, store.ErrNotFound):
			c.internalError(f.RequestID, err, "load conversation")
			return
		}
	}
	created := conv == nil
	if created && !c.srv.creates.Allow(c.client(), c.srv.clock.Now()) {
		c.send(errorEvent(f.RequestID, codeRateLimited, msgTooManyConversations))
		return
	}
	opening := agent.Opening{AgentID: agentID, UserName: f.UserName, ContactEmail: f.UserEmail}
	var sess *store.Session
	if created {
		// A new conversation and its first session are one write.
		var err error
		if conv, sess, err = c.srv.engine.NewConversation(ctx, c.principal.Sub, supports, opening); err != nil {
			c.internalError(f.RequestID, err, "create conversation")
			return
		}
	} else {
		if supports != nil {
			declared := supports
			if len(declared) == 0 {
				declared = nil // an explicit [] clears the set
			}
			if err := c.srv.engine.SetSupports(ctx, conv.ID, declared); err != nil {
				c.srv.log.Warn("store supports", "err", err)
			}
		}
		var err error
		if sess, err = c.srv.engine.OpenSession(ctx, conv.ID, opening); err != nil {
			c.internalError(f.RequestID, err, "create session")
			return
		}
	}
	if c.sessions == nil {
		c.sessions = map[string]*store.Session{}
	}
	c.sessions[sess.ID] = sess
	if created {
		if c.made == nil {
			c.made = map[string]*store.Conversation{}
		}
		c.made[conv.ID] = conv
	}
	// Watched from before the ack, so nothing the conversation's turns say
	// from then on is missed; heard only after the ack and the card.
	c.watch(conv.ID)
	c.send(immediate(f.RequestID, 200, "Session created", sessionData(sess)))
	var shown []*store.Park
	requestID := ""
	if _, busy := c.followed(); !created && !busy {
		if supports != nil {
			conv.Supports = supports
		}
		if again := c.srv.engine.Rejoin(ctx, sess, conv); len(again) > 0 {
			var frames []event
			var queued []string // a group's cards after the first, for who sees one at a time
			for _, ev := range again {
				switch {
				case ev.Kind == agent.EventPrompt && len(shown) > 0 && !c.asked(extParallelAsks):
					queued = append(queued, ev.Park.ToolCall.ID)
					continue
				case ev.Kind == agent.EventToolCall && slices.Contains(queued, ev.Call.ID):
					continue
				case ev.Kind == agent.EventPrompt:
					shown, requestID = append(shown, ev.Park), ev.RequestID
				case ev.Kind == agent.EventText && !c.asked(extTurnCatchUp):
					continue // the words before the card only to who asked
				}
				frames = append(frames, c.frameFor(ev))
			}
			if len(queued) > 0 {
				c.mu.Lock()
				c.groupShown, c.queuedCalls = shown[0].Group, queued
				c.mu.Unlock()
			}
			c.follow(&following{conv: conv.ID, requestID: requestID, session: sess.ID, park: shown[0], others: shown[1:]}, frames...)
		}
	}
	c.openWatch(conv.ID, requestID, shown)
}

// findConversation loads the conversation a client's id names, in any of
// the id's forms.
func (c *conn) findConversation(ctx context.Context, id string) (*store.Conversation, error) {
	for _, form := range idForms(id) {
		if conv, err := c.srv.store.Conversation(ctx, form); !errors.Is(err, store.ErrNotFound) {
			return conv, err
		}
	}
	return nil, store.ErrNotFound
}

// sessionData is a session's payload. A conversation id stored before ids
// were UUIDs (32 hex digits) goes out hyphenated, as the reference schemas
// require (format: uuid); a resume finds it in that form.
func sessionData(s *store.Session) *sessionPayload {
	return &sessionPayload{AgentID: s.AgentID, AgentName: s.AgentName, AgentParticipantID: s.AgentParticipantID,
		ConversationID: canonicalID(s.ConversationID), SessionID: s.ID, UserParticipantID: s.UserParticipantID}
}

// session loads a session; ok is false when it does not exist or its
// conversation is not visible to this connection. Sessions this connection
// created are not read again: only their contact fields change later, and
// nothing here reads those.
func (c *conn) session(ctx context.Context, id string) (*store.Session, bool, error) {
	id, ok := storedID(id)
	if !ok {
		return nil, false, nil
	}
	if s, ok := c.sessions[id]; ok {
		cp := *s // created here, so visible here
		return &cp, true, nil
	}
	s, err := c.srv.store.Session(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if c.auth {
		conv, err := c.srv.store.Conversation(ctx, s.ConversationID)
		if err != nil {
			return nil, false, err
		}
		if !c.visible(conv) {
			return nil, false, nil
		}
	}
	return s, true, nil
}

// loadSession loads a visible session, or answers the frame with the
// error notFound makes (made only then; INTERNAL_ERROR on a storage
// failure) and returns false.
func (c *conn) loadSession(ctx context.Context, id, requestID string, notFound func() event) (*store.Session, bool) {
	sess, ok, err := c.session(ctx, id)
	if err != nil {
		c.internalError(requestID, err, "load session")
		return nil, false
	}
	if !ok {
		c.send(notFound())
		return nil, false
	}
	return sess, true
}

// noPendingEvent is the reference's NO_PENDING_INTERACTION; when the
// card named ended, its message goes on to say how and when.
func noPendingEvent(f *frame, ended *agent.AskEndedError) event {
	msg := fmt.Sprintf("no interaction is awaiting submission for session '%s'", f.SessionID)
	if ended != nil {
		msg += ": " + ended.Error()
	}
	return errorEvent(f.RequestID, codeNoPendingInteract, msg)
}

func (c *conn) getSession(ctx context.Context, f *frame) {
	sess, ok := c.loadSession(ctx, f.SessionID, f.RequestID, func() event { return errorEvent(f.RequestID, codeSessionNotFound, "Session not found") })
	if !ok {
		return
	}
	c.send(immediate(f.RequestID, 200, "OK", sessionData(sess)))
}

// sendMessage starts a turn. A running turn keeps the connection's slot,
// and so does a card for the session that raised it (§2.4), unless the
// message names it in withdrawInteraction; a card that waits for another
// session (a resumed client that does not know it, another tab) is
// withdrawn, and the new turn starts.
func (c *conn) sendMessage(ctx context.Context, f *frame) {
	t, busy := c.followed()
	inProgress := func() event { return errorEvent(f.RequestID, codeTurnInProgress, msgTurnInProgress) }
	if busy && (t.park == nil || (t.park.SessionID == canonicalID(f.SessionID) && f.Withdraw != t.park.ID)) {
		c.send(inProgress())
		return
	}
	requestID := f.RequestID
	if requestID == "" {
		requestID = uuid.NewString() // a wire correlation id, kept in no index: stays v4
	}
	sess, ok := c.loadSession(ctx, f.SessionID, requestID, func() event { return errorEvent(requestID, codeSessionNotFound, "Session not found") })
	if !ok {
		return
	}
	if busy && t.conv != sess.ConversationID {
		c.send(inProgress()) // one turn per connection
		return
	}
	c.watchNow(sess.ConversationID)
	m := agent.Message{RequestID: requestID, Text: f.Message}
	ack := func() {
		c.follow(&following{conv: sess.ConversationID, requestID: requestID, session: sess.ID, sent: true},
			immediate(requestID, 202, "Processing your request...", nil))
	}
	// The first message to a conversation this connection made, when
	// nothing has happened to it since: no park can be pending, and the
	// turn reads neither its conversation nor its history. Tried once.
	if m.Made = c.made[sess.ConversationID]; m.Made != nil {
		delete(c.made, sess.ConversationID)
		err := c.srv.engine.Send(ctx, sess, m, ack)
		if !errors.Is(err, agent.ErrTurnInProgress) {
			if err != nil {
				c.internalError(requestID, err, "store message")
			}
			return
		}
		m.Made = nil
	}
	// Another session's turn may be running, here or in another process,
	// or a card of this session may wait: the engine refuses the message,
	// and stores nothing. Another session's card it withdraws.
	m.Withdraw = f.Withdraw
	err := c.srv.engine.Send(ctx, sess, m, ack)
	switch {
	case errors.Is(err, agent.ErrTurnInProgress):
		c.send(inProgress())
	case err != nil:
		c.internalError(requestID, err, "store message")
	}
}

// submitInteraction runs the checks of PROTOCOL.md §2.5 in order.
func (c *conn) submitInteraction(ctx context.Context, f *frame) {
	stack.Grow() // for the kind's validator, before the stack is deep
	s := c.srv
	if f.RequestID == "" {
		c.send(errorEvent("", codeValidation, "submit_interaction requires a 'requestId'"))
		return
	}
	if f.SessionID == "" {
		c.send(errorEvent(f.RequestID, codeValidation, "submit_interaction requires a 'sessionId'"))
		return
	}
	sess, ok := c.loadSession(ctx, f.SessionID, f.RequestID, func() event { return noPendingEvent(f, nil) })
	if !ok {
		return
	}
	// The park this connection's turn waits on needs no read: the take
	// says whether it is still pending, and when it is not, the store is
	// asked what is.
	if p := c.heldPark(sess, f.InteractionID); p != nil && c.submitTo(ctx, f, sess, p, true) {
		return
	}
	p, err := c.pendingCard(ctx, sess.ConversationID, f.InteractionID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && p.Type != store.ParkInteraction) {
		ended, err := s.engine.Ended(ctx, sess.ConversationID, f.InteractionID)
		if err != nil {
			c.srv.log.Warn("look up an ended card", "err", err)
		}
		c.send(noPendingEvent(f, ended))
		return
	}
	if err != nil {
		c.internalError(f.RequestID, err, "load park")
		return
	}
	c.submitTo(ctx, f, sess, p, false)
}

// pendingCard is conversation conv's open ask named id, or, when none is
// so named, its first open ask (which the mismatch is told against);
// store.ErrNotFound when none is open.
func (c *conn) pendingCard(ctx context.Context, conv, id string) (*store.Park, error) {
	ps, err := c.srv.engine.PendingAsks(ctx, conv)
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return nil, store.ErrNotFound
	}
	for _, p := range ps {
		if p.ID == id {
			return p, nil
		}
	}
	return ps[0], nil
}

// heldPark is the interaction park id of sess's conversation that this
// connection's turn waits on; nil when it waits on none.
func (c *conn) heldPark(sess *store.Session, id string) *store.Park {
	t, ok := c.followed()
	if !ok {
		return nil
	}
	if p := t.waitsOn(id); p != nil && p.Type == store.ParkInteraction && p.ConversationID == sess.ConversationID {
		return p
	}
	return nil
}

// submitTo answers pending park p with f. held says p is the
// connection's own (heldPark): when it was taken meanwhile, submitTo sends
// nothing and returns false.
func (c *conn) submitTo(ctx context.Context, f *frame, sess *store.Session, p *store.Park, held bool) bool {
	s := c.srv
	if f.InteractionID != p.ID {
		c.send(errorEvent(f.RequestID, codeInteractionMismatch, "the submitted 'interactionId' does not match the pending interaction"))
		return true
	}
	if f.Kind != nil && *f.Kind != p.Kind {
		c.send(errorEvent(f.RequestID, codeInteractionMismatch, fmt.Sprintf("the pending interaction is '%s', not '%s'", p.Kind, *f.Kind)))
		return true
	}
	if c.busyWithOther(p.ID) {
		c.send(errorEvent(f.RequestID, codeTurnInProgress, msgTurnInProgress))
		return true
	}
	if !f.Declined && f.Values == nil {
		c.send(errorEvent(f.RequestID, codeValidation, "submit_interaction requires 'values' (or 'declined': true)"))
		return true
	}
	message := "Interaction submitted"
	if f.Declined {
		message = "Interaction declined"
	}
	c.watchNow(sess.ConversationID)
	// The engine takes the answer exactly once, in one write, then this
	// queues the ack, so it is on the wire before any frame of the resumed
	// stream, and an acknowledged answer is never lost.
	waitsOnOthers, requestID := false, ""
	ok, err := s.engine.Submit(ctx, sess, p.ID, agent.Answer{Values: f.Values, Declined: f.Declined}, func(taken agent.Taken) {
		ack := &submitAck{Declined: f.Declined, InteractionID: p.ID, SessionID: sess.ID}
		if !f.Declined {
			ack.Kind, ack.Values = p.Kind, taken.Values
		}
		frame := immediate(f.RequestID, 200, message, ack)
		requestID = taken.RequestID
		if !taken.Resumes {
			// One of the cards a step opened together: the turn waits on
			// the others still.
			waitsOnOthers = true
			c.answeredOne(p.ID, frame)
			return
		}
		c.follow(&following{conv: sess.ConversationID, requestID: taken.RequestID, session: sess.ID}, frame)
	})
	if ok && err == nil && waitsOnOthers && !c.asked(extParallelAsks) {
		c.nextCard(ctx, sess, p, requestID)
	}
	var invalid *agent.InvalidAnswerError
	var ended *agent.AskEndedError
	switch {
	case errors.As(err, &ended) && held:
		return false // taken meanwhile: the caller reads what is pending now
	case errors.As(err, &ended):
		c.send(noPendingEvent(f, ended))
	case errors.As(err, &invalid):
		c.send(nested("interaction_invalid", f.RequestID, object{
			"interactionId": p.ID, "kind": p.Kind, "errors": invalid.Errors, "message": msgFieldsInvalid}))
	case errors.Is(err, agent.ErrKindNotHosted):
		c.send(errorEvent(f.RequestID, codeNoPendingInteract, fmt.Sprintf("interaction kind '%s' is not hosted by this server", p.Kind)))
	case err != nil:
		c.internalError(f.RequestID, err, "submit")
	case !ok && held:
		return false
	case !ok:
		c.send(noPendingEvent(f, nil))
	}
	return true
}

// busyWithOther tells whether this connection runs a turn other than the
// one parked on park id.
func (c *conn) busyWithOther(parkID string) bool {
	t, ok := c.followed()
	return ok && t.waitsOn(parkID) == nil
}

// answeredOne queues the ack of an answer to park id, one of several cards
// open at once that others still wait on: a socket that followed its turn
// waits on those.
func (c *conn) answeredOne(id string, ack event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.enqueueLocked(ack)
	if c.turn != nil && c.turn.waitsOn(id) != nil {
		c.turn = c.turn.answered(id)
	}
}

// nextCard shows a socket that is shown one card at a time (it did not
// ask for ExtParallelAsks) the next open card of answered's group, after
// the answer's ack, as the reference shows the next card after the
// previous one's answer.
func (c *conn) nextCard(ctx context.Context, sess *store.Session, answered *store.Park, requestID string) {
	ps, err := c.srv.engine.PendingAsks(ctx, answered.ConversationID)
	if err != nil {
		c.srv.log.Warn("load the next card", "err", err)
		return
	}
	for _, p := range ps {
		if p.Group != answered.Group {
			continue
		}
		c.mu.Lock()
		c.queuedCalls = slices.DeleteFunc(c.queuedCalls, func(id string) bool { return id == p.ToolCall.ID })
		c.mu.Unlock()
		if w := c.watching[p.ConversationID]; w != nil {
			w.alsoShown(p.ID)
		}
		c.follow(&following{conv: p.ConversationID, requestID: requestID, session: sess.ID, park: p},
			prompt(p, requestID, c.waitingFor(p)), toolCallChunk(requestID, p.ToolCall.Name, p.ToolCall.Arguments))
		return
	}
}

// cancelTurn stops the connection's turn, whose cancelled event it hears
// like every socket that watches the turn; with the shared-turns
// extension, one of another socket, named by its request id.
func (c *conn) cancelTurn(ctx context.Context, f *frame) {
	c.mu.Lock()
	t := c.turn
	c.turn = nil
	c.mu.Unlock()
	if t != nil {
		c.srv.engine.Cancel(ctx, t.conv, t.requestID)
		return
	}
	if c.asked(extSharedTurns) {
		for conv := range c.watching {
			c.srv.engine.Cancel(ctx, conv, f.RequestID)
		}
	}
	// Nothing of this socket's to cancel: nothing is sent.
}

func (c *conn) getMessages(ctx context.Context, f *frame) {
	if f.SessionID == "" {
		c.send(errorEvent(f.RequestID, codeValidation, "Missing 'sessionId'"))
		return
	}
	sess, ok := c.loadSession(ctx, f.SessionID, f.RequestID, func() event { return errorEvent(f.RequestID, codeSessionNotFound, "Session not found") })
	if !ok {
		return
	}
	unknownCursor := func() { c.send(errorEvent(f.RequestID, codeValidation, "Unknown 'cursor'")) }
	cursor := f.Cursor
	if cursor != "" {
		if cursor, ok = storedID(cursor); !ok { // a cursor is a message id
			unknownCursor()
			return
		}
	}
	roles := []store.Role{store.RoleUser, store.RoleReply}
	if c.asked(extEndedTurns) {
		roles = append(roles, store.RoleEnded)
	}
	msgs, more, err := c.srv.store.Messages(ctx, sess.ConversationID, roles, cursor, pageSize(f.Limit))
	if errors.Is(err, store.ErrNotFound) && cursor != "" {
		unknownCursor()
		return
	}
	if err != nil {
		c.srv.log.Error("list messages", "err", err)
		c.send(errorEvent(f.RequestID, codeStorage, "Failed to list messages."))
		return
	}
	var cards map[string][]object
	if len(msgs) > 0 && c.asked(extHistoryCards) {
		if cards, err = c.resolvedCards(ctx, sess.ConversationID, cursor, msgs[len(msgs)-1]); err != nil {
			c.srv.log.Error("list cards", "err", err)
			c.send(errorEvent(f.RequestID, codeStorage, "Failed to list messages."))
			return
		}
	}
	out := make([]object, len(msgs))
	for i, m := range msgs {
		dir := "outbound"
		if m.Role == store.RoleUser {
			dir = "inbound"
		}
		out[i] = object{"id": m.ID, "direction": dir, "content": object{"text": m.Text},
			"createdAt": m.CreatedAt.UTC().Format(time.RFC3339Nano)}
		if list := cards[m.ID]; len(list) > 0 {
			out[i]["interactions"] = list
		}
		if m.Role == store.RoleEnded {
			out[i]["ended"] = map[bool]string{false: "stopped", true: "failed"}[m.IsError]
		}
	}
	var next any
	if more && len(msgs) > 0 {
		next = msgs[len(msgs)-1].ID
	}
	c.send(immediate(f.RequestID, 200, "ConversationMessages", object{"messages": out, "nextCursor": next, "hasMore": more}))
}

// maxCardWalk bounds how many stored messages one history page reads to
// find its cards, and maxCardParks how many ended parks; the cards past
// them are left out.
const (
	maxCardWalk  = 2000
	maxCardParks = 500
)

// resolvedCards finds the cards of the turns on a history page (a kindkit
// extension): per user message id, oldest first, each card its turn showed
// and that ended, in the order shown. A card comes from its park, which
// keeps how it ended: a kind's card, a host tool's Ask (an MCP server's
// elicitation too) and a write confirmation, answered, declined, expired,
// withdrawn or stopped; one addressed to someone the connection's
// principal is not (agent.MayAnswer) with how it ended and by whom, but
// not the answer, which was the addressee's to give. History stored
// before parks kept outcomes has its
// raise cards read from the messages instead (resolvedCard). The pending
// card is not listed: it is sent again as interaction_required. It reads
// the conversation's messages newest first from before (the page's
// cursor) down to oldest, the page's oldest message, and the parks saved
// between the two: a turn's parks are saved after its user message and
// before its reply. A park is its call's when it was saved after the
// call's message: on a store that processes share, one whose clock is
// behind the one that wrote the message leaves the card out.
func (c *conn) resolvedCards(ctx context.Context, conversationID, before string, oldest *store.Message) (map[string][]object, error) {
	parks, err := c.srv.store.EndedParks(ctx, conversationID, oldest.CreatedAt, before, maxCardParks)
	if err != nil {
		return nil, err
	}
	byCall := map[string][]*store.Park{} // tool call id → its parks, in the order saved
	for _, p := range parks {
		byCall[p.ToolCall.ID] = append(byCall[p.ToolCall.ID], p)
	}
	catalog := c.srv.catalog
	roles := []store.Role{store.RoleUser, store.RoleReply, store.RoleAssistant, store.RoleTool, store.RoleEnded}
	out := map[string][]object{}
	results := map[string]*store.Message{} // tool call id → its result, seen before its call
	var turn []object                      // the cards of the turn being read, newest first
	var steps []string                     // its model steps' texts, newest first
	var stepOf []int                       // for each card of turn, how many of steps came after it
	for read := 0; read < maxCardWalk; {
		msgs, more, err := c.srv.store.Messages(ctx, conversationID, roles, before, 100)
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			read++
			switch m.Role {
			case store.RoleTool:
				results[m.ToolCallID] = m
			case store.RoleAssistant:
				for _, call := range slices.Backward(m.ToolCalls) {
					// A call's parks were saved after its message: the
					// ones before it are of an older call with the same id
					// (a model may reuse ids from turn to turn).
					ps := byCall[call.ID]
					i := len(ps)
					for i > 0 && !ps[i-1].CreatedAt.Before(m.CreatedAt) {
						i--
					}
					byCall[call.ID] = ps[:i]
					if mine := ps[i:]; len(mine) > 0 {
						for _, p := range slices.Backward(mine) {
							card := parkCard(p)
							if c.waitingFor(p) != "" {
								card["outcome"] = statusOf(p.Outcome) // someone else's answer: how it ended, not what it said
							}
							turn = append(turn, card)
							stepOf = append(stepOf, len(steps))
						}
					} else if card := resolvedCard(catalog, call, results[call.ID]); card != nil {
						turn = append(turn, card)
						stepOf = append(stepOf, len(steps))
					}
				}
				steps = append(steps, m.Text)
			case store.RoleUser:
				if len(turn) > 0 {
					placeCards(turn, stepOf, steps)
					slices.Reverse(turn)
					out[m.ID] = turn
				}
				turn, steps, stepOf = nil, nil, nil
			}
			if m.ID == oldest.ID {
				return out, nil
			}
		}
		if !more || len(msgs) == 0 {
			break
		}
		before = msgs[len(msgs)-1].ID
	}
	return out, nil
}

// placeCards gives each card of a turn (newest first) its replyOffset:
// where in the turn's reply it was shown, after the text of the model step
// that raised it and of those before, as the reply joins them
// (agent.JoinSteps), in UTF-16 code units (a JavaScript string's index).
// stepOf[i] is how many of steps (newest first) came after card i's step.
func placeCards(cards []object, stepOf []int, steps []string) {
	for i, card := range cards {
		said := ""
		for _, text := range slices.Backward(steps[stepOf[i]:]) {
			said = agent.JoinSteps(said, text)
		}
		card["replyOffset"] = len(utf16.Encode([]rune(said)))
	}
}

// parkCard is an ended park's card: a kind's {interactionId, kind, spec,
// reason, outcome}, or a write confirmation's {confirmation: {toolId, actionDescription},
// outcome}, which has no kind.
func parkCard(p *store.Park) object {
	card := object{"interactionId": p.ID, "kind": p.Kind, "spec": p.Spec, "reason": p.Reason, "outcome": p.Outcome}
	if p.Type == store.ParkConfirmation {
		card = object{"confirmation": object{"toolId": p.ToolCall.Name, "actionDescription": actionDescription(p.ToolCall.Name)},
			"outcome": p.Outcome}
	}
	if r := agent.AskRecordOf(p).Record; r != nil {
		card["record"] = r // who ended it, when, how and where
	}
	return card
}

// statusOf is outcome with its status alone: {"status": …}.
func statusOf(outcome json.RawMessage) object {
	var o struct {
		Status string `json:"status"`
	}
	json.Unmarshal(outcome, &o)
	return object{"status": o.Status}
}

// resolvedCard is, for history stored before parks kept their outcomes,
// one raise call's card, or nil when call is not a kind's raise or did not
// end in a payload. The spec is the raise's arguments made canonical again
// by the kind; the outcome is the raise call's result.
func resolvedCard(catalog *kindkit.Catalog, call store.ToolCall, result *store.Message) object {
	if catalog == nil {
		return nil
	}
	k, ok := catalog.ByTool(call.Name)
	if !ok || result == nil {
		return nil
	}
	var p struct {
		Status string `json:"status"`
	}
	if json.Unmarshal([]byte(result.Text), &p) != nil {
		return nil
	}
	switch kindkit.Status(p.Status) {
	case kindkit.StatusSubmitted, kindkit.StatusDeclined, kindkit.StatusNoResponse:
		if result.IsError {
			return nil
		}
	case "withdrawn":
	default:
		return nil // a fallback directive, or an error
	}
	raise, err := k.ParseRaise([]byte(call.Arguments))
	if err != nil {
		return nil
	}
	return object{"kind": k.Descriptor().Name, "spec": raise.Spec.JSON, "reason": raise.Reason,
		"outcome": json.RawMessage(result.Text)}
}

// pageSize is a list's length: the frame's limit, 50 when it gives none,
// and never more than 100.
func pageSize(limit int) int {
	if limit <= 0 {
		return 50
	}
	return min(limit, 100)
}

// listConversations lists the caller's conversations, most recently
// updated first. An authenticated principal gets the conversations it
// owns. Anonymously a conversation id is the bearer secret, so an anonymous
// caller gets only the conversations this connection has sessions in,
// never anyone else's.
func (c *conn) listConversations(ctx context.Context, f *frame) {
	filter := store.ConversationFilter{Owner: c.principal.Sub}
	if !c.auth || c.principal.Sub == "" {
		seen := map[string]bool{}
		filter.IDs = []string{}
		for _, s := range c.sessions {
			if !seen[s.ConversationID] {
				seen[s.ConversationID] = true
				filter.IDs = append(filter.IDs, s.ConversationID)
			}
		}
	}
	list, err := c.srv.store.ListConversations(ctx, filter, pageSize(f.Limit))
	if err != nil {
		c.srv.log.Error("list conversations", "err", err)
		c.send(errorEvent(f.RequestID, codeStorage, "Failed to list conversations."))
		return
	}
	out := make([]object, len(list))
	for i, s := range list {
		out[i] = object{"conversationId": canonicalID(s.ID), "title": conversationTitle(s.Title),
			"updatedAt": s.UpdatedAt.UTC().Format(time.RFC3339Nano), "messageCount": s.MessageCount}
	}
	c.send(immediate(f.RequestID, 200, "Conversations", object{"conversations": out}))
}

// verifyOTP answers verify_otp (PROTOCOL.md §2.9) with its checks in
// order. kindkit has no OTP service and never offers a verification, so a
// well-formed request for a visible session gets otp_invalid with the
// NOT_FOUND reason and no attempts left: no code is pending, and one
// would have to be requested.
func (c *conn) verifyOTP(ctx context.Context, f *frame) {
	code := strings.TrimSpace(string(f.Code))
	switch {
	case f.RequestID == "":
		c.send(errorEvent("", codeValidation, "verify_otp requires a 'requestId'"))
		return
	case f.SessionID == "":
		c.send(errorEvent(f.RequestID, codeValidation, "verify_otp requires a 'sessionId'"))
		return
	case code == "" || code == "null" || code == `""`:
		c.send(errorEvent(f.RequestID, codeValidation, "verify_otp requires a 'code'"))
		return
	}
	notFound := func() event {
		return errorEvent(f.RequestID, codeSessionNotFound, fmt.Sprintf("session '%s' not found", f.SessionID))
	}
	if _, ok := c.loadSession(ctx, f.SessionID, f.RequestID, notFound); !ok {
		return
	}
	c.send(nested("otp_invalid", f.RequestID, otpInvalid{Error: "NOT_FOUND", AttemptsRemaining: 0,
		Message: "No verification code is pending for this session."}))
}

// conversationTitle is the first user message on one line, cut to
// maxTitleRunes runes.
func conversationTitle(first string) string {
	title := strings.Join(strings.Fields(first), " ")
	if utf8.RuneCountInString(title) <= maxTitleRunes {
		return title
	}
	return strings.TrimSpace(string([]rune(title)[:maxTitleRunes-1])) + "…"
}

const maxTitleRunes = 80

// cut is s cut to at most n bytes, never inside a UTF-8 sequence, with an
// ellipsis when it was cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func (c *conn) confirmToolAction(ctx context.Context, f *frame) {
	if f.SessionID == "" {
		c.send(errorEvent(f.RequestID, codeValidation, "confirm_tool_action requires a 'sessionId'"))
		return
	}
	d, ok := decisionOf(f)
	if !ok {
		c.send(errorEvent(f.RequestID, codeValidation, "confirm_tool_action requires a boolean 'approved', or a 'decision': approve, edit, reject or respond"))
		return
	}
	noPending := errorEvent(f.RequestID, codeNoPendingConfirm,
		fmt.Sprintf("no tool action is awaiting confirmation for session '%s'", f.SessionID))
	t, ok := c.followed()
	if !ok || t.park == nil || t.park.Type != store.ParkConfirmation || t.session != canonicalID(f.SessionID) {
		c.send(noPending)
		return
	}
	sess, ok := c.loadSession(ctx, f.SessionID, f.RequestID, func() event { return noPending })
	if !ok {
		return
	}
	approved := d.Decision == agent.Approve || d.Decision == agent.Edit
	message := "Tool action rejected"
	if approved {
		message = "Tool action approved"
	}
	ok, err := c.srv.engine.Decide(ctx, sess, t.park.ID, d, func(taken agent.Taken) {
		c.follow(&following{conv: sess.ConversationID, requestID: taken.RequestID, session: sess.ID},
			immediate(f.RequestID, 200, message, object{"sessionId": f.SessionID, "approved": approved}))
	})
	var ended *agent.AskEndedError
	var invalid *agent.InvalidAnswerError
	switch {
	case errors.As(err, &ended):
		noPending.Error.Message += ": " + ended.Error()
		c.send(noPending)
	case errors.As(err, &invalid):
		c.send(nested("confirmation_invalid", f.RequestID, object{
			"toolId": t.park.ToolCall.Name, "errors": invalid.Errors, "message": msgFieldsInvalid}))
	case errors.Is(err, agent.ErrDecisionNotAllowed):
		c.send(errorEvent(f.RequestID, codeValidation, fmt.Sprintf("the decision '%s' is not allowed for tool '%s'", cut(f.Decision, 32), t.park.ToolCall.Name)))
	case err != nil:
		c.internalError(f.RequestID, err, "take confirmation")
	case !ok:
		c.send(noPending)
	}
}

// decisionOf is the decision a confirm_tool_action sends: its decision
// (ExtToolDecisions), else approved as the reference has it.
func decisionOf(f *frame) (agent.Decided, bool) {
	d := agent.Decided{Arguments: f.Arguments, Message: f.Message}
	switch f.Decision {
	case "":
		if f.Approved == nil {
			return d, false
		}
		d.Decision = agent.Reject
		if *f.Approved {
			d.Decision = agent.Approve
		}
	case "approve":
		d.Decision = agent.Approve
	case "edit":
		d.Decision = agent.Edit
	case "reject":
		d.Decision = agent.Reject
	case "respond":
		d.Decision = agent.Respond
	default:
		return d, false
	}
	return d, true
}
