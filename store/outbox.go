package store

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// The types of an ask's events (OutboxEvent.Type).
const (
	EventAskParked   = "ask.parked"   // a park was saved: its card waits for a person
	EventAskResolved = "ask.resolved" // a pending park ended, however it ended
)

// OutboxEvent is one event of an ask, kept in a store's outbox for one
// consumer (a webhook endpoint) until the consumer is done with it. It
// holds what an ask is and how it ended, never the conversation's
// messages, the model's words or an answer's values.
type OutboxEvent struct {
	// ID names the event, the same for every consumer and every attempt
	// to deliver it (a webhook's webhook-id); it holds no '.'.
	ID             string
	Consumer       string
	Type           string // EventAskParked or EventAskResolved
	AskID          string // the park's id: the interactionId
	ConversationID string
	Ask            ParkKind // ParkInteraction or ParkConfirmation
	Kind           string   // the interaction kind's wire name; "" for a confirmation
	Tool           string   // a confirmation's tool; "" for an interaction
	Deadline       time.Time
	// Status is how a resolved ask ended: its outcome's status
	// (submitted, declined, no_response, withdrawn, cancelled, approved,
	// denied) or, for an ask that ended with no outcome, its state
	// (resolved, expired, cancelled, replaced). "" for ask.parked.
	Status string
	// At is when the park was saved (its CreatedAt), or when it ended: the
	// time of the write that ended it, on the store's clock (a replaced
	// park's, its replacement's CreatedAt).
	At time.Time
	// Attempts counts the consumer's attempts that failed so far.
	Attempts int
}

// Outbox is a store's outbox of ask events: once OpenOutbox has named its
// consumers, every park saved (SavePark) and every pending park that ends
// (TakePark, StartTurn's withdrawal, SavePark's replacement of the one
// before) writes one event for each consumer in the same atomic write as
// the park's change, so an event exists exactly when its change was stored.
// A store whose outbox names no consumer writes nothing for it.
//
// A consumer leases its events to deliver them: a leased event is not
// leased again until its lease runs out, so processes sharing a store do
// not deliver one event twice while they run.
type Outbox interface {
	// OpenOutbox adds consumers: from now on each gets the events of
	// this store's writes. Adding one again changes nothing.
	OpenOutbox(consumers ...string)
	// CloseOutbox stops writing events for consumer and deletes its
	// events, wherever they were written.
	CloseOutbox(ctx context.Context, consumer string) error
	// OutboxOpen says whether this store writes events for consumer.
	OutboxOpen(consumer string) bool
	// LeaseEvent leases consumer's oldest event that is due at now (never
	// tried, or its retry or lease time has come) and that no earlier
	// event of the same ask waits before, to owner until until; nil when
	// there is none. So an ask's events go out in order: its ask.resolved
	// waits until its ask.parked is done.
	LeaseEvent(ctx context.Context, consumer, owner string, now, until time.Time) (*OutboxEvent, error)
	// EventDone deletes consumer's event id: delivered, or given up.
	EventDone(ctx context.Context, consumer, id string) error
	// RetryEvent counts a failed attempt of consumer's event id and makes
	// it due again at due, while owner holds its lease; ErrLeaseLost when
	// it does not (it ran out, and another took the event).
	RetryEvent(ctx context.Context, consumer, id, owner string, due time.Time) error
}

// Outboxed is a store that can keep an outbox: Outbox returns it, or nil
// when this store cannot (a wrapper over one that cannot).
type Outboxed interface {
	Outbox() Outbox
}

// OutboxOf is s's outbox, nil when it keeps none.
func OutboxOf(s Store) Outbox {
	if o, ok := s.(Outboxed); ok {
		return o.Outbox()
	}
	return nil
}

// ParkedEvent is the ask.parked event of park p, for consumer.
func ParkedEvent(p *Park, consumer string) *OutboxEvent {
	return askEvent(p, consumer, EventAskParked, p.CreatedAt)
}

// ResolvedEvent is the ask.resolved event of park p, which ended at at as
// p says (its state and outcome), for consumer.
func ResolvedEvent(p *Park, consumer string, at time.Time) *OutboxEvent {
	e := askEvent(p, consumer, EventAskResolved, at)
	e.Status = string(p.State)
	var o struct {
		Status string `json:"status"`
	}
	if len(p.Outcome) > 0 && json.Unmarshal(p.Outcome, &o) == nil && o.Status != "" {
		e.Status = o.Status
	}
	return e
}

func askEvent(p *Park, consumer, typ string, at time.Time) *OutboxEvent {
	// An id holds no '.': it is signed as id.timestamp.body.
	id := "msg_" + strings.ReplaceAll(p.ID, ".", "_") + "_" + strings.TrimPrefix(typ, "ask.")
	e := &OutboxEvent{ID: id, Consumer: consumer, Type: typ, AskID: p.ID,
		ConversationID: p.ConversationID, Ask: p.Type, Deadline: p.Deadline, At: at.UTC()}
	if at.IsZero() {
		e.At = time.Now().UTC()
	}
	if p.Type == ParkConfirmation {
		e.Tool = p.ToolCall.Name
	} else {
		e.Kind = p.Kind
	}
	return e
}
