package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kindkit/kindkit/store"
)

// An Answerer answers a host tool call's card from outside the call's
// runs: for something the tool set hears while the card waits, such as an
// MCP server's notice that the link a URL-mode elicitation sent the person
// to has been completed (agent/mcp). The answer takes the path of a
// person's (Engine.Submit): the card's kind validates it, the park is
// taken exactly once, and the turn resumes, so a card answered by the
// person first, or withdrawn, or expired, is left as it is.
type Answerer struct {
	e    *Engine
	conv string
	call string
}

// AnswererFrom returns the Answerer of the host tool call that ctx belongs
// to; ok is false outside a host tool call.
func AnswererFrom(ctx context.Context) (a *Answerer, ok bool) {
	as, ok := ctx.Value(liveKey{}).(*asker)
	if !ok {
		return nil, false
	}
	return &Answerer{e: as.t.eng, conv: as.t.session.ConversationID, call: as.call.ID}, true
}

// Answer answers the call's pending card with ans, if match says it is
// the card meant (given the card's kind and spec JSON). answered is false
// when the call has no such pending card: it was answered, or it has not
// been parked yet (the run that asks it has not returned). An answer that
// the kind refuses is an *InvalidAnswerError, and the card stays pending.
func (a *Answerer) Answer(ctx context.Context, match func(kind string, spec json.RawMessage) bool, ans Answer) (answered bool, err error) {
	p, err := a.e.cfg.Store.PendingPark(ctx, a.conv)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("agent: answer a card: %w", err)
	}
	if p.Type != store.ParkInteraction || p.ToolCall.ID != a.call || !match(p.Kind, p.Spec) {
		return false, nil
	}
	// The answer is the park's session's, as if given where the card was
	// shown.
	sess, err := a.e.cfg.Store.Session(ctx, p.SessionID)
	if err != nil {
		return false, fmt.Errorf("agent: answer a card: load its session: %w", err)
	}
	answered, err = a.e.submit(ctx, sess, p.ID, ans, ViaTool, nil)
	var ended *AskEndedError
	if errors.As(err, &ended) {
		return false, nil // answered meanwhile
	}
	return answered, err
}
