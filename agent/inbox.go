package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kindkit/kindkit/store"
)

// ErrNoPrincipal is Inbox's error for a caller that names no principal
// (WithPrincipal): an inbox is someone's, so it needs auth.
var ErrNoPrincipal = errors.New("agent: an inbox is a principal's: the call names none")

// InboxQuery selects a page of Engine.Inbox.
type InboxQuery struct {
	Kind   string    // only asks of this kind; "" for every kind
	Before time.Time // only asks whose deadline is before it; zero for all
	// After is the Next of the page before; nil for the first page.
	After *store.InboxCursor
	Limit int // at most MaxInboxPage; 0 for DefaultInboxPage
}

// The sizes of an inbox's pages.
const (
	DefaultInboxPage = 50
	MaxInboxPage     = 200
)

// InboxAsk is a pending ask as an inbox lists it: enough to draw its card
// (the kind's schemas are the catalog's) and to answer it (Submit, Decide
// on a session of its conversation), never the conversation's messages.
type InboxAsk struct {
	ID             string         // the interactionId
	ConversationID string         // the conversation whose turn it resumes
	Ask            store.ParkKind // interaction or confirmation
	Kind           string         // an interaction's kind; "" for a confirmation
	Spec           json.RawMessage
	Reason         string
	Tool           string          // a confirmation's tool call
	Arguments      json.RawMessage // …and its arguments
	Deadline       time.Time       // zero for none
	Addressee      string          // "" for an ask of a conversation the caller owns
	CreatedAt      time.Time
}

// InboxPage is a page of Engine.Inbox: its asks, and the cursor of the
// next page (nil after the last).
type InboxPage struct {
	Asks []InboxAsk
	Next *store.InboxCursor
}

// Inbox lists the pending asks ctx's caller may answer (MayAnswer agrees
// with every one), across conversations: those addressed to its principal
// (WithPrincipal) or to a group of its (WithGroups, "group:NAME"), and the
// unaddressed ones of the conversations it owns; by deadline (none last),
// then id, a page at a time. ErrNoPrincipal without a principal.
func (e *Engine) Inbox(ctx context.Context, q InboxQuery) (InboxPage, error) {
	principal := principalOf(ctx)
	if principal == "" {
		return InboxPage{}, ErrNoPrincipal
	}
	to := []string{principal}
	groups, _ := ctx.Value(groupsKey{}).([]string)
	for _, g := range groups {
		if g != "" && !slices.Contains(to, GroupPrefix+g) {
			to = append(to, GroupPrefix+g)
		}
	}
	if len(to) > store.MaxInboxAddressees {
		return InboxPage{}, fmt.Errorf("agent: inbox: a principal of %d groups; an inbox serves at most %d", len(groups), store.MaxInboxAddressees-1)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultInboxPage
	}
	limit = min(limit, MaxInboxPage)
	parks, err := e.cfg.Store.Inbox(ctx, store.InboxQuery{Addressees: to, Owner: principal, Kind: q.Kind, Before: q.Before, After: q.After, Limit: limit})
	if err != nil {
		return InboxPage{}, err
	}
	var page InboxPage
	if len(parks) == limit {
		next := store.InboxCursorOf(parks[len(parks)-1])
		page.Next = &next
	}
	for _, p := range parks {
		addressee := e.AddressedTo(p)
		if !MayAnswer(ctx, addressee) {
			continue // the store's query and MayAnswer disagree: trust MayAnswer
		}
		a := InboxAsk{ID: p.ID, ConversationID: p.ConversationID, Ask: p.Type, Deadline: p.Deadline,
			Addressee: addressee, CreatedAt: p.CreatedAt}
		if p.Type == store.ParkConfirmation {
			a.Tool, a.Arguments = p.ToolCall.Name, toolArguments(p.ToolCall.Arguments)
		} else {
			a.Kind, a.Spec, a.Reason = p.Kind, p.Spec, p.Reason
		}
		page.Asks = append(page.Asks, a)
	}
	return page, nil
}
