package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/store"
)

// A Decision is what a person may decide on a tool call that waits for
// them (a write confirmation). The constants are bits, so a set of them is
// a Decision too: Approve|Reject.
type Decision uint8

const (
	Approve Decision = 1 << iota // run the call as the model made it
	Edit                         // run it with the person's arguments, checked against the tool's schema
	Reject                       // do not run it; the person's message, if any, is the model's to read
	Respond                      // do not run it; the person's words stand in for its result
)

var decisionNames = []struct {
	d    Decision
	name string
}{{Approve, "approve"}, {Edit, "edit"}, {Reject, "reject"}, {Respond, "respond"}}

// Names are the decisions of set d, in the order approve, edit, reject,
// respond.
func (d Decision) Names() []string {
	var out []string
	for _, n := range decisionNames {
		if d&n.d != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

func (d Decision) String() string { return strings.Join(d.Names(), "|") }

// ParseDecisions reads a comma-separated list of decision names
// ("approve,reject,edit").
func ParseDecisions(s string) (Decision, error) {
	var d Decision
	for name := range strings.SplitSeq(s, ",") {
		name = strings.TrimSpace(name)
		found := false
		for _, n := range decisionNames {
			if n.name == name {
				d |= n.d
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("agent: unknown decision %q (approve, edit, reject or respond)", name)
		}
	}
	return d, nil
}

// ConfirmMatching is a confirmation policy (Config.Confirm): a tool whose
// name contains one of subs waits for a person, who may make decisions d
// on its calls; any other tool runs without asking.
func ConfirmMatching(d Decision, subs ...string) func(tool string) Decision {
	return func(tool string) Decision {
		for _, sub := range subs {
			if sub != "" && strings.Contains(tool, sub) {
				return d
			}
		}
		return 0
	}
}

// Decided is a person's decision on a tool call that waits (Engine.Decide).
type Decided struct {
	Decision Decision // one of Approve, Edit, Reject, Respond
	// Arguments are Edit's: a JSON object the call runs with instead of
	// the model's, checked against the tool's parameters first.
	Arguments json.RawMessage
	// Message is Reject's reason, which the model reads (optional), and
	// Respond's words, which stand in for the call's result (required).
	Message string
}

// ErrDecisionNotAllowed is the error of a decision the tool's policy does
// not allow (Engine.Allowed).
var ErrDecisionNotAllowed = errors.New("agent: the tool's policy does not allow this decision")

// Allowed is what a person may decide on the call that confirmation park
// p waits on: what the engine's policy (Config.Confirm) allows for its
// tool now, with Approve and Reject always, which every client of the
// protocol can send.
func (e *Engine) Allowed(p *store.Park) Decision {
	d := Approve | Reject
	if e.cfg.Confirm != nil {
		d |= e.cfg.Confirm(p.ToolCall.Name)
	}
	return d
}

// Tool returns the host tool named name, as the model is shown it: its
// description and parameters (for a transport that lets a person edit a
// call's arguments).
func (e *Engine) Tool(name string) (Tool, bool) {
	ht, ok := e.hostTool(name)
	return ht.Tool, ok
}

// Decide answers park parkID, the write confirmation that sess's
// conversation waits on, with the person's decision d, which the tool's
// policy must allow (Allowed; ErrDecisionNotAllowed otherwise). Approve
// runs the call; Edit runs it with d.Arguments, which must match the tool's
// parameters (an *InvalidAnswerError with an error per field otherwise;
// the confirmation stays pending); Reject gives the model the refusal and
// d.Message as the call's result; Respond gives it d.Message as the
// result. The record keeps the decision, and for Edit both sets of
// arguments. ack runs once the decision is taken, before the turn resumes;
// ok is false when the confirmation was not pending any more (with an
// *AskEndedError, as for Submit).
func (e *Engine) Decide(ctx context.Context, sess *store.Session, parkID string, d Decided, ack func(Taken)) (ok bool, err error) {
	p, _, err := e.pending(ctx, sess.ConversationID, parkID, store.ParkConfirmation)
	if err != nil {
		return false, err
	}
	if p == nil {
		return e.late(ctx, sess.ConversationID, parkID)
	}
	if !MayAnswer(ctx, e.AddressedTo(p)) {
		return false, nil // not the caller's to decide: as if it did not exist
	}
	if d.Decision&(d.Decision-1) != 0 || e.Allowed(p)&d.Decision == 0 {
		return false, ErrDecisionNotAllowed
	}
	var r Result
	switch d.Decision {
	case Edit:
		args, err := e.checkArguments(p.ToolCall.Name, d.Arguments)
		if err != nil {
			return false, err
		}
		d.Arguments = args
	case Reject:
		r = Result{Text: deniedResult, IsError: true}
		if msg := strings.TrimSpace(d.Message); msg != "" {
			r.Text += ". They said: " + msg
		}
	case Respond:
		if strings.TrimSpace(d.Message) == "" {
			return false, &InvalidAnswerError{Errors: []kindkit.FieldError{{Field: "message", Message: "Say what to answer instead of running the tool."}}}
		}
		r = Result{Text: respondedResult + d.Message}
	}
	defer func() {
		if !ok && err == nil {
			ok, err = e.late(ctx, sess.ConversationID, parkID) // taken meanwhile
		}
	}()
	return e.resolveAck(context.WithValue(ctx, decidedKey{}, &d), sess, p, store.ParkResolved, r, personPath(ctx), func(t *turn) {
		if ack != nil {
			ack(Taken{RequestID: t.requestID, Resumes: !t.notResumed})
		}
	})
}

// respondedResult begins a call's result when the person answered in its
// place (Respond).
const respondedResult = "Not run: the person answered in its place: "

// editedNote begins the result of a call the person edited (Edit): the
// model's history has the arguments it asked for, so it is told which
// ones ran.
func editedNote(args string) string {
	return "The person edited this call's arguments; it ran with " + args + ". Result: "
}

type decidedKey struct{}

// decidedFrom is the decision Decide takes a park with, or nil (Confirm,
// and every path that is not a person's decision).
func decidedFrom(ctx context.Context) *Decided {
	d, _ := ctx.Value(decidedKey{}).(*Decided)
	return d
}

// checkArguments checks a call's edited arguments against its tool's
// parameters and returns them compact.
func (e *Engine) checkArguments(tool string, args json.RawMessage) (json.RawMessage, error) {
	invalid := func(msg string) error {
		return &InvalidAnswerError{Errors: []kindkit.FieldError{{Field: "arguments", Message: msg}}}
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return nil, invalid("The arguments are not JSON.")
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, invalid("The arguments must be an object.")
	}
	ht, ok := e.hostTool(tool)
	if !ok {
		return nil, invalid(fmt.Sprintf("The tool %s is not available to check them.", tool))
	}
	if len(ht.Parameters) > 0 {
		schema, err := compileParameters(ht.Parameters)
		if err != nil {
			return nil, fmt.Errorf("agent: tool %s: parameters: %w", tool, err)
		}
		if err := schema.Validate(v); err != nil {
			return nil, &InvalidAnswerError{Errors: kindkit.SchemaFieldErrors(err)}
		}
	}
	return json.Marshal(v)
}

// compileParameters compiles a tool's parameter schema for validation.
func compileParameters(params json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(params)))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	const url = "kindkit:tool-parameters.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}
