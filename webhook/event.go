package webhook

import (
	"encoding/json"
	"time"

	"github.com/kindkit/kindkit/store"
)

// Body is an event as a webhook's body: Standard Webhooks' type,
// timestamp (when the ask parked or ended, RFC 3339, UTC) and data.
type Body struct {
	Type      string    `json:"type"` // ask.parked or ask.resolved
	Timestamp time.Time `json:"timestamp"`
	Data      Data      `json:"data"`
}

// Data is what an event says of its ask: never the conversation's
// messages, the model's words or an answer's values.
type Data struct {
	InteractionID  string `json:"interactionId"`
	ConversationID string `json:"conversationId"`
	// Ask is interaction (a kind's card) or confirmation (a tool call
	// that waits for approval).
	Ask  string `json:"ask"`
	Kind string `json:"kind,omitempty"` // an interaction's kind
	Tool string `json:"tool,omitempty"` // a confirmation's tool
	// Deadline is when the ask stops waiting, when it has one.
	Deadline *time.Time `json:"deadline,omitempty"`
	// Status is how an ask.resolved's ask ended: its outcome's status
	// (submitted, declined, no_response, withdrawn, cancelled, approved,
	// denied) or, when it ended without an outcome, its state (resolved,
	// expired, cancelled, replaced).
	Status string `json:"status,omitempty"`
	// AnswerURL is, for an ask.parked, a one-time link that answers the
	// ask from a standalone page (Config.AnswerURL; package link), when
	// the sender makes them.
	AnswerURL string `json:"answerUrl,omitempty"`
}

// body is e's webhook body: the same bytes on every attempt, since it is
// made from the event as stored (answerURL, when not nil, must make the
// same link of the same event).
func body(e *store.OutboxEvent, answerURL func(*store.OutboxEvent) string) ([]byte, error) {
	b := Body{Type: e.Type, Timestamp: e.At.UTC(), Data: Data{InteractionID: e.AskID, ConversationID: e.ConversationID,
		Ask: string(e.Ask), Kind: e.Kind, Tool: e.Tool, Status: e.Status}}
	if !e.Deadline.IsZero() {
		d := e.Deadline.UTC()
		b.Data.Deadline = &d
	}
	if e.Type == store.EventAskParked && answerURL != nil {
		b.Data.AnswerURL = answerURL(e)
	}
	return json.Marshal(b)
}
