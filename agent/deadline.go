package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/store"
)

// expiry is a park's deadline policy as the engine resolved it when the
// ask was raised, from the Ask's own (kindkit.WithDeadline), else its
// kind's (x-kind deadline), else the engine's default: how long the park
// waits, and what its deadline resolves it to, with the default values,
// canonical, for kindkit.ExpireDefault. The park keeps On and Default in
// its turn's state; its Deadline is when.
type expiry struct {
	After   time.Duration   `json:"-"`
	On      kindkit.Expiry  `json:"on,omitempty"`
	Default json.RawMessage `json:"default,omitempty"`
}

// policy is the deadline policy of an ask of kind k for spec, with the
// Ask's own d (nil: none, and the kind's applies). Default values the
// kind refuses are an error now, when the ask is raised: never a surprise
// at expiry.
func (e *Engine) policy(k kindkit.Kind, spec *kindkit.Spec, d *kindkit.Deadline) (expiry, error) {
	p := e.defaultPolicy()
	if d == nil {
		kd := k.Descriptor().Deadline
		if kd.After == 0 && kd.OnExpiry == "" {
			return p, nil
		}
		d = &kd // the kind's own, from its x-kind
	}
	if err := d.Check(); err != nil {
		return expiry{}, err
	}
	if d.After > 0 {
		p.After = d.After
	}
	if d.OnExpiry != "" {
		p.On = d.OnExpiry
	}
	if p.On != kindkit.ExpireDefault {
		return p, nil
	}
	values, errs := k.Validate(spec, d.Default)
	if len(errs) > 0 {
		var b strings.Builder
		for i, fe := range errs {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s: %s", fe.Field, fe.Message)
		}
		return expiry{}, fmt.Errorf("the deadline's default values are not a valid answer: %s", b.String())
	}
	p.Default = values
	return p, nil
}

// defaultPolicy is the engine's deadline policy (Config.ParkTimeout and
// Config.OnExpiry), which a model's raise gets.
func (e *Engine) defaultPolicy() expiry {
	return expiry{After: e.cfg.ParkTimeout, On: e.cfg.OnExpiry}
}

// kept is the policy as a parked turn's state keeps it: none for the
// plain no_response.
func (p expiry) kept() *expiry {
	if p.On == "" || p.On == kindkit.ExpireNoResponse {
		return nil
	}
	return &p
}

// expire resolves park p, whose deadline passed, as its policy says: with
// no_response, with its default values (an answer like the person's,
// hooks included), or by ending its turn.
func (e *Engine) expire(ctx context.Context, p *store.Park) error {
	s := e.readState(p)
	switch {
	case s.Expiry != nil && s.Expiry.On == kindkit.ExpireDefault && p.Type == store.ParkInteraction:
		// The default was checked, canonical, by the version that asked
		// the card: the turn resumes with it as asked, and the hooks
		// (and a host tool's Ask) get it as the version now has it.
		values, now := s.Expiry.Default, s.Expiry.Default
		card, ok, err := e.askedOf(p, s)
		if err == nil && card.from != "" {
			if now = card.nowOf(p.Spec, values); card.forTool {
				values = now
			}
			if !ok || values == nil {
				e.kindChanged(ctx, p, s, nil)
				return nil
			}
		}
		_, err = e.resolveAck(ctx, nil, p, store.ParkResolved, Result{Text: kindkit.Submitted(values).JSON()}, ViaDeadline, func(t *turn) {
			e.answeredAs(ctx, t.session, p, now)
		})
		return err
	case s.Expiry != nil && s.Expiry.On == kindkit.ExpireEndTurn:
		e.endAtDeadline(ctx, p, s)
		return nil
	}
	_, err := e.resolveAck(ctx, nil, p, store.ParkExpired, e.expiredAnswer(p), ViaDeadline, nil)
	return err
}

// endAtDeadline ends park p unanswered and its turn, s, with it, as a
// cancel would: what the turn said before its card is kept, and every
// subscriber hears the turn's cancelled event.
func (e *Engine) endAtDeadline(ctx context.Context, p *store.Park, s turnState) {
	ended := endedMessage(p.ConversationID, s.Text, false, e.clock.Now())
	taken, ok, err := e.cfg.Store.TakePark(ctx, p.ID, store.Answer{State: store.ParkExpired, Outcome: outcomeExpired,
		Messages: []*store.Message{ended}, Record: e.record(ctx, p, s, ViaDeadline, nil, "")})
	if err != nil {
		e.log.Error("end a turn at its deadline", "interactionId", p.ID, "err", err)
	}
	if ok {
		e.endedWithTurn(taken, s, store.ParkExpired)
		e.endGroup(ctx, p, ViaDeadline)
	}
}
