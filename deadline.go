package kindkit

import (
	"encoding/json"
	"fmt"
	"time"
)

// Expiry is what an ask's deadline resolves it to.
type Expiry string

const (
	// ExpireNoResponse ends the ask unanswered: an Ask returns
	// ErrNoResponse, the model reads a no_response payload. The default.
	ExpireNoResponse Expiry = "no_response"
	// ExpireDefault answers the ask with the deadline's Default values,
	// which the kind validated when the ask was raised.
	ExpireDefault Expiry = "default"
	// ExpireEndTurn ends the ask unanswered and its turn with it: the
	// turn stops, as if the person had pressed Stop, and owes no reply.
	ExpireEndTurn Expiry = "end_turn"
)

// Deadline is an ask's deadline policy: how long it waits for its answer,
// and what its expiry resolves it to. The zero Deadline is the engine's
// default.
type Deadline struct {
	After    time.Duration   // how long the ask waits; zero: the engine's default
	OnExpiry Expiry          // what expiry resolves it to; "": ExpireNoResponse
	Default  json.RawMessage // the values ExpireDefault answers with, as the kind's Values
}

// Check says what is wrong with d, before any ask uses it.
func (d Deadline) Check() error {
	if d.After < 0 {
		return fmt.Errorf("kindkit: deadline: a negative wait (%v)", d.After)
	}
	switch d.OnExpiry {
	case "", ExpireNoResponse, ExpireEndTurn:
		if d.Default != nil {
			return fmt.Errorf("kindkit: deadline: default values with on-expiry %q (want %q)", d.OnExpiry, ExpireDefault)
		}
	case ExpireDefault:
		if !json.Valid(d.Default) {
			return fmt.Errorf("kindkit: deadline: on-expiry %q needs Default, the values as JSON", ExpireDefault)
		}
	default:
		return fmt.Errorf("kindkit: deadline: unknown on-expiry %q (want %q, %q or %q)", d.OnExpiry, ExpireNoResponse, ExpireDefault, ExpireEndTurn)
	}
	return nil
}

// AskOptions are how one Ask asks (AskOption).
type AskOptions struct {
	// Deadline, when set, is the ask's deadline policy in place of the
	// engine's default.
	Deadline *Deadline
	// To, when set, addresses the ask (AddressedTo): only it may answer.
	To string
}

// AddressedTo addresses an Ask to to: a principal (an authenticated
// subject, "ada") or, written "group:NAME", every principal whose token's
// groups claim names NAME. Only an addressee may answer it; the
// conversation's other participants see it waiting for to, and an
// answer from them is refused as if the ask did not exist.
func AddressedTo(to string) AskOption {
	return func(o *AskOptions) { o.To = to }
}

// An AskOption sets how one Ask asks.
type AskOption func(*AskOptions)

// WithDeadline gives an Ask its own deadline policy: how long it waits,
// and what expiry resolves it to. A Default that the kind's validation
// refuses makes the Ask fail at once, never at expiry.
func WithDeadline(d Deadline) AskOption {
	return func(o *AskOptions) { o.Deadline = &d }
}
