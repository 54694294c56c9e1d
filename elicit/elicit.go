package elicit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kindkit/kindkit"
)

var (
	// ErrNotElicitable is the error of a kind whose Values kindgen could not
	// flatten into MCP's form; the error says why, with the schema pointer.
	ErrNotElicitable = errors.New("kindkit: this kind cannot be asked by MCP elicitation")
	// ErrNoElicitation is the error of a client that did not declare the
	// elicitation capability (form mode) when it connected.
	ErrNoElicitation = errors.New("kindkit: the MCP client does not support form elicitation")
	// ErrInputRequests is Elicit's error on a session whose protocol has a
	// server ask through a tool result's input requests instead of
	// elicitation/create: use a Question there.
	ErrInputRequests = errors.New("kindkit: this MCP session takes elicitations as input requests of a tool result, not elicitation/create")
)

// DefaultAttempts is how many times Elicit asks when Options leaves it 0.
const DefaultAttempts = 3

// Options tune Elicit; nil means the defaults.
type Options struct {
	// Attempts is how many times to ask in all, the first time included,
	// while the answers are invalid; 0 means DefaultAttempts.
	Attempts int
	// ID names the question among the input requests of one tool call
	// (Ask on MCP 2026-07-28); "" means the kind's name.
	ID string
	// StateKey is the 32-byte key that seals Ask's request state (MCP
	// 2026-07-28). nil: a random key of this process, so that an answer
	// that comes back to another process, or after a restart, is asked
	// afresh; servers behind a load balancer share one key.
	StateKey []byte
	// StateTTL is how long a request state holds; 0 means
	// DefaultStateTTL.
	StateTTL time.Duration
}

// InvalidError is the error of answers that were still invalid after the
// last attempt: the kind's field errors of the last one.
type InvalidError struct {
	Kind     string
	Attempts int
	Errors   []kindkit.FieldError
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("elicit %s: still invalid after %d %s: %s", e.Kind, e.Attempts, plural(e.Attempts, "attempt", "attempts"), fieldErrors(e.Errors))
}

// Elicit asks the person behind session the question spec of kind k by MCP
// elicitation and returns the answer's canonical values, typed (V is the
// kind's Values type, S its Spec type: elicit.Elicit[choicesgen.Values](ctx,
// session, kind, spec, message, nil)).
//
// It asks NewQuestion's question with elicitation/create. An invalid answer
// is asked again, with the errors after the message, up to
// Options.Attempts times in all, after which the error is an
// *InvalidError. A declined form is kindkit.ErrDeclined and a cancelled one
// kindkit.ErrNoResponse, as Ask returns them.
//
// The go-sdk checks accepted content against the requested schema on both
// ends, so what reaches the kind's validation has the form's shape; content
// that breaks it makes the session's Elicit fail, and that error is
// returned, not asked again (the SDK does not hand the content over).
//
// A session on MCP 2026-07-28 or later may not be sent elicitation/create
// (SEP-2322): there a tool handler returns the Question's Params as an
// input request and reads the retried call's response with Answer; Elicit
// returns ErrInputRequests.
func Elicit[V, S any](ctx context.Context, session *mcp.ServerSession, k kindkit.Kind, spec *S, message string, opts *Options) (*V, error) {
	name := k.Descriptor().Name
	attempts := DefaultAttempts
	if opts != nil && opts.Attempts > 0 {
		attempts = opts.Attempts
	}
	if err := canElicit(session); err != nil {
		return nil, fmt.Errorf("elicit %s: %w", name, err)
	}
	q, err := NewQuestion[V](k, spec, message)
	if err != nil {
		return nil, err
	}
	var problems []kindkit.FieldError
	for attempt := 1; ; attempt++ {
		res, err := session.Elicit(ctx, q.Params(problems))
		if err != nil {
			return nil, fmt.Errorf("elicit %s: %w", name, err)
		}
		v, errs, err := q.Answer(res)
		if err != nil || len(errs) == 0 {
			return v, err
		}
		if attempt >= attempts {
			return nil, &InvalidError{Kind: name, Attempts: attempt, Errors: errs}
		}
		problems = errs
	}
}

// A Question is a kind's question for one spec as an MCP elicitation: the
// params to send, and the reading of the answer. Elicit asks it; a tool
// handler on MCP 2026-07-28 returns Params as one of its result's
// InputRequests and reads the retried call's InputResponses with Answer.
type Question[V any] struct {
	kind    kindkit.Kind
	spec    kindkit.Spec
	form    *Form
	message string
}

// NewQuestion checks spec as a model's raise is checked (the kind's schema
// and rules; message is the reason) and draws the kind's form for it
// (NewForm). The message above the form is the spec's question texts, then
// message. A kind kindgen could not flatten gives ErrNotElicitable.
func NewQuestion[V, S any](k kindkit.Kind, spec *S, message string) (*Question[V], error) {
	d := k.Descriptor()
	if d.ElicitationSchema == "" {
		return nil, fmt.Errorf("elicit %s: %w: it has no elicitation form (generated by an older kindgen?)", d.Name, ErrNotElicitable)
	}
	args, err := raiseArgs(spec, message)
	if err != nil {
		return nil, fmt.Errorf("elicit %s: %w", d.Name, err)
	}
	raise, err := k.ParseRaise(args)
	if err != nil {
		return nil, fmt.Errorf("elicit %s: %w", d.Name, err)
	}
	form, err := NewForm(d.ElicitationSchema, raise.Spec.JSON)
	if err != nil {
		return nil, fmt.Errorf("elicit %s: %w", d.Name, err)
	}
	texts := append(slices.Clone(form.Texts), strings.TrimSpace(message))
	msg := strings.TrimSpace(strings.Join(texts, "\n\n"))
	if msg == "" {
		msg = "Please fill in this form."
	}
	return &Question[V]{kind: k, spec: raise.Spec, form: form, message: msg}, nil
}

// Form is the question's form.
func (q *Question[V]) Form() *Form { return q.form }

// Params are the elicitation/create params of the question; problems, the
// errors of the previous answer, are said after the message.
func (q *Question[V]) Params(problems []kindkit.FieldError) *mcp.ElicitParams {
	msg := q.message
	if len(problems) > 0 {
		msg += "\n\nPlease check your answer: " + fieldErrors(problems) + "."
	}
	return &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: q.form.Schema}
}

// Answer reads the person's answer: the canonical values, typed; or the
// kind's field errors of an invalid answer, to ask again with; or
// kindkit.ErrDeclined for a declined form and kindkit.ErrNoResponse for a
// cancelled one.
func (q *Question[V]) Answer(res *mcp.ElicitResult) (*V, []kindkit.FieldError, error) {
	name := q.kind.Descriptor().Name
	if res == nil {
		return nil, nil, fmt.Errorf("elicit %s: no result", name)
	}
	switch res.Action {
	case "accept":
	case "decline":
		return nil, nil, kindkit.ErrDeclined
	case "cancel":
		return nil, nil, kindkit.ErrNoResponse
	default:
		return nil, nil, fmt.Errorf("elicit %s: the client answered with the unknown action %q", name, res.Action)
	}
	values, errs := q.form.Values(res.Content)
	if len(errs) == 0 {
		values, errs = q.kind.Validate(&q.spec, values)
	}
	if len(errs) > 0 {
		return nil, errs, nil
	}
	var v V
	if err := json.Unmarshal(values, &v); err != nil {
		return nil, nil, fmt.Errorf("elicit %s: decode the answer: %w", name, err)
	}
	return &v, nil, nil
}

// inputRequestsVersion is the first MCP version in which a server may not
// send elicitation/create itself (SEP-2322).
const inputRequestsVersion = "2026-07-28"

// canElicit reports why session cannot be sent elicitation/create: the
// client did not declare form elicitation (one that declares neither form
// nor url means form, as the SDK reads it), or its protocol wants input
// requests.
func canElicit(session *mcp.ServerSession) error {
	p := session.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return ErrNoElicitation
	}
	if c := p.Capabilities.Elicitation; c.Form == nil && c.URL != nil {
		return ErrNoElicitation
	}
	if p.ProtocolVersion >= inputRequestsVersion {
		return fmt.Errorf("%w (the session speaks MCP %s)", ErrInputRequests, p.ProtocolVersion)
	}
	return nil
}

// raiseArgs are spec's JSON with the reason, as a model's raise sends them.
func raiseArgs(spec any, reason string) ([]byte, error) {
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("the spec must be a JSON object")
	}
	if r, err := json.Marshal(reason); err == nil && strings.TrimSpace(reason) != "" {
		obj["reason"] = r
	}
	return json.Marshal(obj)
}

func fieldErrors(errs []kindkit.FieldError) string {
	parts := make([]string, len(errs))
	for i, e := range errs {
		if e.Field != "" {
			parts[i] = e.Field + ": " + e.Message
		} else {
			parts[i] = e.Message
		}
	}
	return strings.Join(parts, "; ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
