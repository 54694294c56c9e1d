package server

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/store"
)

// following is the one turn a socket follows, the protocol's slot (one
// turn per socket, TURN_IN_PROGRESS): the turn it sent, answered or was
// shown the card of again as it joined, until the turn ends. It is
// written under c.mu by the socket's own actions, and kept up to date from
// what the socket hears of the turn on the engine's stream (hear).
type following struct {
	conv      string
	requestID string
	session   string      // the session the socket follows it on
	park      *store.Park // the park it waits on, as told; nil while it runs
	// others are the other open parks of park's group (cards a step
	// opened together, ExtParallelAsks) that it waits on too.
	others []*store.Park
	sent   bool // sent here and never parked: the socket's close aborts it
}

// waitsOn is park id when the turn waits on it; nil when it does not.
func (t *following) waitsOn(id string) *store.Park {
	if t.park != nil && t.park.ID == id {
		return t.park
	}
	for _, p := range t.others {
		if p.ID == id {
			return p
		}
	}
	return nil
}

// answered is t once park id of it was answered and others still wait:
// it waits on those.
func (t following) answered(id string) *following {
	var open []*store.Park
	for _, p := range append([]*store.Park{t.park}, t.others...) {
		if p != nil && p.ID != id {
			open = append(open, p)
		}
	}
	t.park, t.others = nil, nil
	if len(open) > 0 {
		t.park, t.others = open[0], open[1:]
	}
	return &t
}

// hear queues an event of conversation conv's turns and follows the
// socket's turn by it: a prompt parks it, a run resumed from its park
// runs it, its terminal event ends it, and another turn's prompt means its
// park was replaced.
func (c *conn) hear(conv string, ev agent.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.turn
	mine := t != nil && t.conv == conv && t.requestID == ev.RequestID
	if ev.Kind == agent.EventMessage && (mine || !c.asked(extUserMessages)) {
		return // the sender knows its message; a user_message only to who asked
	}
	if ev.Kind == agent.EventRunning && !c.asked(extTurnCatchUp) {
		return // a turn_running only to who asked
	}
	if c.queuedLocked(ev) {
		return
	}
	c.enqueueLocked(c.frameFor(ev))
	switch {
	case mine && (ev.Kind == agent.EventReply || ev.Kind == agent.EventFailed || ev.Kind == agent.EventCancelled):
		c.turn = nil
	case mine && ev.Kind == agent.EventPrompt && ev.Park.Group != "" && t.park != nil && t.park.Group == ev.Park.Group:
		t.others = append(t.others, ev.Park) // opened with the one before
	case mine && ev.Kind == agent.EventPrompt:
		t.park, t.others, t.sent = ev.Park, nil, false
	case mine && t.park != nil && ev.After != "" && t.waitsOn(ev.After) != nil:
		t.park, t.others = nil, nil // answered, here or elsewhere: the turn runs on
	case !mine && t != nil && t.conv == conv && t.park != nil && ev.Kind == agent.EventPrompt:
		c.turn = nil // the conversation's newest card replaced the one t waited on
	}
}

// queuedLocked keeps from a socket that did not ask for ExtParallelAsks
// the cards of a group after the first (and their call chunks): it is
// shown one card at a time, the next after its answer's ack (nextCard).
func (c *conn) queuedLocked(ev agent.Event) bool {
	if c.asked(extParallelAsks) {
		return false
	}
	switch {
	case ev.Kind == agent.EventPrompt && ev.Park.Group != "":
		if c.groupShown != ev.Park.Group {
			c.groupShown, c.queuedCalls = ev.Park.Group, nil
			return false
		}
		c.queuedCalls = append(c.queuedCalls, ev.Park.ToolCall.ID)
		return true
	case ev.Kind == agent.EventToolCall && slices.Contains(c.queuedCalls, ev.Call.ID):
		return true
	}
	return false
}

// follow queues frames (an ack, a card shown again) and makes t the
// socket's turn, in one step: what the socket hears of t from then on is
// its own turn's.
func (c *conn) follow(t *following, frames ...event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ev := range frames {
		c.enqueueLocked(ev)
	}
	c.turn = t
}

// followed is the socket's turn; false when it follows none.
func (c *conn) followed() (following, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.turn == nil {
		return following{}, false
	}
	return *c.turn, true
}

// frameFor is the protocol event of a turn event for this connection: a
// write confirmation says what may be decided on it to a connection that
// asked (ExtToolDecisions).
func (c *conn) frameFor(ev agent.Event) event {
	if ev.Kind != agent.EventPrompt {
		return frameFor(ev)
	}
	p := ev.Park
	waitingFor := c.waitingFor(p)
	if p.Type != store.ParkConfirmation || !c.asked(extToolDecisions) {
		return prompt(p, ev.RequestID, waitingFor)
	}
	data := object{"toolId": p.ToolCall.Name, "actionDescription": actionDescription(p.ToolCall.Name),
		"decisions": c.srv.engine.Allowed(p).Names(), "arguments": argumentsOf(p.ToolCall.Arguments)}
	if tool, ok := c.srv.engine.Tool(p.ToolCall.Name); ok && len(tool.Parameters) > 0 {
		data["parameters"] = tool.Parameters
	}
	if waitingFor != "" {
		data["waitingFor"] = waitingFor
	}
	return nested("write_confirmation_required", ev.RequestID, data)
}

// waitingFor is whom park p waits for when it is addressed to someone
// this connection's principal is not (agent.MayAnswer): the card is shown
// read-only, waiting for them. "" when the connection may answer it.
func (c *conn) waitingFor(p *store.Park) string {
	to := c.srv.engine.AddressedTo(p)
	if to == "" {
		return ""
	}
	ctx := context.Background()
	if who := c.identity.Load(); who != nil {
		ctx = agent.WithGroups(agent.WithPrincipal(ctx, who.Sub), who.Groups)
	}
	if agent.MayAnswer(ctx, to) {
		return ""
	}
	return to
}

// argumentsOf is a call's arguments as JSON: as the model gave them when
// they are, else as a string.
func argumentsOf(args string) json.RawMessage {
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}

// frameFor is the protocol event of a turn event.
func frameFor(ev agent.Event) event {
	switch ev.Kind {
	case agent.EventText:
		return tokenEvent(ev.RequestID, ev.Text)
	case agent.EventToolCall:
		return toolCallChunk(ev.RequestID, ev.Call.Name, ev.Call.Arguments)
	case agent.EventToolResult:
		return toolResultChunk(ev.RequestID, ev.Call.Name, ev.Text, ev.IsError)
	case agent.EventPrompt:
		return prompt(ev.Park, ev.RequestID, "")
	case agent.EventCancelled:
		return cancelledEvent(ev.RequestID)
	case agent.EventMessage:
		return userMessageEvent(ev.RequestID, ev.Message)
	case agent.EventRunning:
		return turnRunningEvent(ev.RequestID)
	case agent.EventReply:
		r := ev.Reply
		return eventualEvent(ev.RequestID, eventualPayload{
			MessageID: r.MessageID,
			Response: replyResponse{CustomerHappinessScore: 0.5, NeedsSatisfactionScore: 0.5, ResolutionStatus: "in_progress",
				ResponseParts: []string{r.Text}, SuggestedNextActions: []string{}},
			Usage:     usage{PromptTokens: r.Usage.PromptTokens, CompletionTokens: r.Usage.CompletionTokens},
			Citations: r.Citations,
		})
	default:
		return errorEvent(ev.RequestID, codeInternal, msgInternal)
	}
}

// actionDescription is what a write confirmation asks.
func actionDescription(tool string) string { return fmt.Sprintf("Approve calling tool '%s'?", tool) }

// prompt is the event that shows a park to a person: the card, or the
// write confirmation; waitingFor, when set, says it is someone else's to
// answer (kindkit's addressed asks: docs/links.md).
func prompt(p *store.Park, requestID, waitingFor string) event {
	if p.Type == store.ParkConfirmation {
		data := object{"toolId": p.ToolCall.Name, "actionDescription": actionDescription(p.ToolCall.Name)}
		if waitingFor != "" {
			data["waitingFor"] = waitingFor
		}
		return nested("write_confirmation_required", requestID, data)
	}
	return nested("interaction_required", requestID, &interactionPayload{InteractionID: p.ID, Kind: p.Kind, Reason: p.Reason, Spec: p.Spec, WaitingFor: waitingFor})
}
