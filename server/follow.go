package server

import (
	"fmt"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/store"
)

// A conn follows its one turn: it is the engine's agent.Follower, and
// turns the turn's events into protocol frames. Its slot (active) is
// written only under c.mu; lock order: c.mu, then the engine's.

var _ agent.Follower = (*conn)(nil)

func (c *conn) Emit(t *agent.Turn, ev agent.Event) bool { return c.emit(t, frameFor(ev)) }

func (c *conn) Finish(t *agent.Turn, ev agent.Event) { c.finish(t, frameFor(ev)) }

func (c *conn) Release(t *agent.Turn) { c.release(t) }

func (c *conn) Park(t *agent.Turn, prompt ...agent.Event) agent.ParkOutcome {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.active != t:
		return agent.ParkGone
	case c.draining:
		return agent.ParkDraining
	}
	for _, ev := range prompt {
		c.enqueueLocked(frameFor(ev))
	}
	return agent.ParkShown
}

func (c *conn) Adopt(t *agent.Turn, parkID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.active != nil {
		if id, _ := c.active.Parked(); parkID == "" || id != parkID {
			return false
		}
	}
	c.active = t
	return true
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
		return prompt(ev.Park, ev.RequestID)
	case agent.EventCancelled:
		return cancelledEvent(ev.RequestID)
	case agent.EventMessage:
		return userMessageEvent(ev.RequestID, ev.Message)
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
// write confirmation.
func prompt(p *store.Park, requestID string) event {
	if p.Type == store.ParkConfirmation {
		return nested("write_confirmation_required", requestID, object{
			"toolId": p.ToolCall.Name, "actionDescription": actionDescription(p.ToolCall.Name)})
	}
	return nested("interaction_required", requestID, interactionPayload{InteractionID: p.ID, Kind: p.Kind, Reason: p.Reason, Spec: p.Spec})
}
