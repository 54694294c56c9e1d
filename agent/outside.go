package agent

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/kindkit/kindkit/store"
)

// An answer from outside an ask's conversation (an answer link, an inbox)
// names the ask, not a session: FindAsk finds it, MayAnswerAsk says whether
// the caller may see it, and AnswerAsk answers it on the session it was
// asked on, through Submit or Confirm like every other answer.

// OutsideAnswer is an answer given outside an ask's conversation: a
// confirmation's Approved, or a card's Values or Declined.
type OutsideAnswer struct {
	Approved *bool
	Values   json.RawMessage
	Declined bool
}

// AnswerAsk's errors for an OutsideAnswer that does not answer its ask; nothing is
// taken.
var (
	ErrNoDecision = errors.New("agent: a tool call's confirmation is answered with approved: true or false")
	ErrNoAnswer   = errors.New("agent: an answer has values, or declined: true")
)

// FindAsk is ask id of conversation conv: pending (one of its open asks),
// or ended; nil when the store knows neither.
func (e *Engine) FindAsk(ctx context.Context, conv, id string) (p *store.Park, pending bool, err error) {
	ps, err := e.PendingAsks(ctx, conv)
	if err != nil {
		return nil, false, err
	}
	for _, p := range ps {
		if p.ID == id {
			return p, true, nil
		}
	}
	p, err = e.cfg.Store.EndedPark(ctx, conv, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	return p, false, err
}

// MayAnswerAsk says whether ctx's caller (WithPrincipal, WithGroups) may
// see and answer ask p from outside its conversation: its addressee when
// it is addressed (MayAnswer), else its conversation's owner, as Inbox
// lists them.
func (e *Engine) MayAnswerAsk(ctx context.Context, p *store.Park) bool {
	if to := e.AddressedTo(p); to != "" {
		return MayAnswer(ctx, to)
	}
	principal := principalOf(ctx)
	if principal == "" {
		return false
	}
	conv, err := e.cfg.Store.Conversation(ctx, p.ConversationID)
	return err == nil && conv.Owner == principal
}

// AnswerAsk answers pending ask p with r on the session p was asked on:
// a confirmation through Confirm, a card through Submit, with their ok
// and error. ctx names the caller and the path the record keeps (ByLink,
// ByInbox).
func (e *Engine) AnswerAsk(ctx context.Context, p *store.Park, r OutsideAnswer) (ok bool, err error) {
	switch {
	case p.Type == store.ParkConfirmation && r.Approved == nil:
		return false, ErrNoDecision
	case p.Type != store.ParkConfirmation && !r.Declined && len(r.Values) == 0:
		return false, ErrNoAnswer
	}
	sess, err := e.cfg.Store.Session(ctx, p.SessionID)
	if err != nil {
		return false, err
	}
	if p.Type == store.ParkConfirmation {
		return e.Confirm(ctx, sess, p.ID, *r.Approved, nil)
	}
	return e.Submit(ctx, sess, p.ID, Answer{Values: r.Values, Declined: r.Declined}, nil)
}
