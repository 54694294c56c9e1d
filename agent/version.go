package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/store"
)

// A card keeps the version of the kind that asked it (turnState's
// KindVersion). After a deploy that changed the kind, its answer is taken
// as it was asked, by the version that asked it when the catalog keeps
// that one (kindkit.Catalog.KeepEarlier); else it is upgraded to the
// version served now when the kind declares how (kindkit.Upgrader); else
// the ask ends, expired for the reason "kind changed" (ViaKindChanged).
// Never is an answer checked against a schema it was not asked with.

// kindChangedAnswer is the answer of a card whose kind changed in a
// deploy before it was answered and that can no longer take its answer.
var kindChangedAnswer = kindkit.Payload{Status: kindkit.StatusNoResponse,
	Message: "The question expired unanswered: its kind changed in a deploy before it was answered. Ask again if you still need the answer."}.JSON()

// asked is the kind of a pending card as it was asked.
type asked struct {
	kind    kindkit.Kind // the version that asked it; nil when the catalog no longer keeps it
	current kindkit.Kind // the version served now
	from    string       // the version that asked it; "" when it is current, or the card has none
	forTool bool         // a host tool's Ask waits on it: the answer goes to code of the current version
}

// askedOf is the kind of card p, whose turn is s, as it was asked. ok is
// false when the kind changed since and the card can no longer take its
// answer: the catalog keeps neither its version nor an upgrade of it (a
// host tool's Ask needs an upgrade: the tool that takes the answer is
// the current version's code). ErrKindNotHosted when the catalog has no
// kind of its name.
func (e *Engine) askedOf(p *store.Park, s turnState) (a asked, ok bool, err error) {
	current, found := e.cfg.Catalog.Kind(p.Kind)
	if !found {
		return asked{}, false, ErrKindNotHosted
	}
	a = asked{kind: current, current: current, forTool: s.Asking != ""}
	if s.KindVersion == "" || s.KindVersion == current.Descriptor().Version {
		return a, true, nil
	}
	a.from = s.KindVersion
	a.kind, _ = e.cfg.Catalog.Version(p.Kind, s.KindVersion)
	if current.Upgrades() || (a.kind != nil && !a.forTool) {
		return a, true, nil
	}
	return a, false, nil
}

// errUpgrade marks an upgrade that failed: the card cannot take its
// answer, and its ask ends as "kind changed".
var errUpgrade = errors.New("agent: the card cannot be upgraded to its kind's version now")

// take checks values, an answer to card p (whose spec, when not nil, is
// the one its raise checked), as it was asked. It returns the values the
// turn resumes with (as asked, when the version that asked is kept; else
// upgraded) and now, the values as the current version has them, for the
// hooks: nil when they cannot be had (no upgrade, or a failed one). An
// answer for a host tool's Ask is the current version's, or field
// errors, or errUpgrade.
func (a asked) take(p *store.Park, spec *kindkit.Spec, values json.RawMessage) (resumed, now json.RawMessage, errs []kindkit.FieldError, err error) {
	if a.kind == nil {
		now, errs, err = a.upgrade(p.Spec, values)
		return now, now, errs, err
	}
	if spec == nil {
		loaded, err := a.kind.LoadSpec(p.Spec)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("load parked spec: %w", err)
		}
		spec = &loaded
	}
	resumed, errs = a.kind.Validate(spec, values)
	if len(errs) > 0 || a.from == "" {
		return resumed, resumed, errs, nil
	}
	if !a.forTool {
		return resumed, a.nowOf(p.Spec, resumed), nil, nil
	}
	now, errs, err = a.upgrade(p.Spec, resumed)
	return now, now, errs, err
}

// nowOf is values, canonical as the version that asked card spec has
// them, as the current version has them: nil when the kind declares no
// upgrade, or its upgrade fails.
func (a asked) nowOf(spec, values json.RawMessage) json.RawMessage {
	if a.from == "" {
		return values
	}
	if !a.current.Upgrades() {
		return nil
	}
	now, errs, err := a.upgrade(spec, values)
	if err != nil || len(errs) > 0 {
		return nil
	}
	return now
}

// upgrade brings spec, as the version that asked it has it, and values
// answering it to the current version, and checks them there.
func (a asked) upgrade(spec, values json.RawMessage) (json.RawMessage, []kindkit.FieldError, error) {
	upSpec, upValues, err := a.current.Upgrade(a.from, spec, values)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errUpgrade, err)
	}
	now, errs := a.current.Validate(&upSpec, upValues)
	return now, errs, nil
}

// kindChanged ends card p, whose kind changed since it was asked and
// which can no longer take its answer: it expires with the reason (the
// record says ViaKindChanged), and its turn resumes with that answer, in
// the park's own session, as at a deadline. The engine ends it, not the
// caller whose answer or rejoin found it so.
func (e *Engine) kindChanged(ctx context.Context, p *store.Park, s turnState, cause error) {
	now := ""
	if k, ok := e.cfg.Catalog.Kind(p.Kind); ok {
		now = k.Descriptor().Version
	}
	// The cause is the kind's upgrade's, whose text may hold the
	// answer's values: it is not logged.
	e.log.Warn("a card's kind changed since it was asked; its ask ends", "interactionId", p.ID, "kind", p.Kind,
		"askedVersion", s.KindVersion, "version", now, "upgradeFailed", cause != nil)
	ctx = WithPrincipal(ctx, "")
	if _, err := e.resolveAck(ctx, nil, p, store.ParkExpired, Result{Text: kindChangedAnswer}, ViaKindChanged, nil); err != nil {
		e.log.Error("end a card whose kind changed", "interactionId", p.ID, "err", err)
	}
}

// answeredAs runs the hooks of card p's kind with now, an accepted
// answer as the current version has it; nil (an earlier version's
// answer that cannot be upgraded) runs none, rather than hand them
// values of another shape, and says so in the log.
func (e *Engine) answeredAs(ctx context.Context, sess *store.Session, p *store.Park, now json.RawMessage) {
	if now == nil {
		e.log.Warn("an earlier version of a kind was answered; its hooks, of the version now, are not run", "interactionId", p.ID, "kind", p.Kind)
		return
	}
	e.answered(ctx, sess, p.Kind, now)
}

// AskedKind is the kind that shows and validates pending card p as it
// was asked: the version that asked it when the catalog keeps it, else
// the kind served now. ok is false when the catalog hosts no kind of
// its name. A transport that draws a card from its kind's schemas
// (AG-UI's responseSchema) takes them from here.
func (e *Engine) AskedKind(p *store.Park) (k kindkit.Kind, ok bool) {
	a, _, err := e.askedOf(p, e.readState(p))
	if err != nil {
		return nil, false
	}
	if a.kind != nil {
		return a.kind, true
	}
	return a.current, true
}
