package elicit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kindkit/kindkit"
)

// Ask asks the question spec of kind k from inside a tool handler, the way
// the calling session takes it, and returns the answer's canonical values,
// typed, as Elicit does.
//
// On a session before MCP 2026-07-28 it is Elicit: the handler waits for
// the answer, and ask is nil. From 2026-07-28 on a server asks through its
// result instead (SEP-2322): while the question waits for an answer (the
// first time, and after an invalid answer), Ask returns ask, a result with
// the question as an input request, which the handler returns as it is. The
// client asks the person and calls the tool again with the answer; Ask then
// validates it and returns the values, or asks again. So the handler runs
// again from its start, as a host tool around kindkit's Ask does: keep the
// code before Ask free of effects. Earlier answers of the same call ride
// along in the result's request state, so a handler may Ask several
// questions in turn; two of one kind need their own Options.ID. The state
// is the client's to echo and so not trusted: it is sealed with a key the
// server holds (Options.StateKey), bound to the tool and to a deadline, and
// a state that cannot be opened is refused and the questions asked afresh;
// an answer read from it is validated again all the same.
func Ask[V, S any](ctx context.Context, req *mcp.CallToolRequest, k kindkit.Kind, spec *S, message string, opts *Options) (v *V, ask *mcp.CallToolResult, err error) {
	name := k.Descriptor().Name
	if req == nil || req.Params == nil || req.Session == nil {
		return nil, nil, fmt.Errorf("elicit %s: Ask needs the tool call's request", name)
	}
	if err := canElicit(req.Session); !errors.Is(err, ErrInputRequests) {
		v, err := Elicit[V](ctx, req.Session, k, spec, message, opts)
		return v, nil, err
	}
	q, err := NewQuestion[V](k, spec, message)
	if err != nil {
		return nil, nil, err
	}
	id, attempts, ttl := name, DefaultAttempts, DefaultStateTTL
	var key []byte
	if opts != nil {
		if opts.ID != "" {
			id = opts.ID
		}
		if opts.Attempts > 0 {
			attempts = opts.Attempts
		}
		if opts.StateTTL > 0 {
			ttl = opts.StateTTL
		}
		key = opts.StateKey
	}
	sl, err := newSealer(key)
	if err != nil {
		return nil, nil, err
	}
	params := req.Params
	now := time.Now()
	st, refused := readState(sl, params, now)
	if refused != nil || params.RequestState == "" {
		// Nothing of a refused state is believed, not even the answers
		// that came with it: they answer questions of a state that is
		// gone. Answers without a state answer no question this server
		// asked (and would reset the count of attempts): asked afresh.
		params = &mcp.CallToolParamsRaw{Name: params.Name}
	}
	res, answered := st.Answers[id]
	if r, ok := params.InputResponses[id].(*mcp.ElicitResult); ok {
		res, answered = r, true
	}
	var problems []kindkit.FieldError
	if answered {
		v, errs, err := q.Answer(res)
		if err != nil || len(errs) == 0 {
			return v, nil, err
		}
		st.Attempts[id]++
		if st.Attempts[id] >= attempts {
			return nil, nil, &InvalidError{Kind: name, Attempts: st.Attempts[id], Errors: errs}
		}
		problems = errs
	}
	delete(st.Answers, id)
	for k, r := range params.InputResponses {
		if r, ok := r.(*mcp.ElicitResult); ok && k != id {
			st.Answers[k] = r
		}
	}
	st.Tool, st.Expires = params.Name, now.Add(ttl).Unix()
	sealed, err := sl.seal(st)
	if err != nil {
		return nil, nil, fmt.Errorf("elicit %s: %w", name, err)
	}
	return nil, &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{id: q.Params(problems)}, RequestState: sealed}, nil
}

// readState opens the request state a client echoed for tool. None is the
// empty state; one that cannot be opened (tampered with, expired, another
// tool's) is refused with its error, and the questions are asked afresh.
func readState(sl *sealer, p *mcp.CallToolParamsRaw, now time.Time) (state, error) {
	st := state{}
	var err error
	if p.RequestState != "" {
		if st, err = sl.open(p.RequestState, p.Name, now); err != nil {
			st = state{}
		}
	}
	if st.Answers == nil {
		st.Answers = map[string]*mcp.ElicitResult{}
	}
	if st.Attempts == nil {
		st.Attempts = map[string]int{}
	}
	return st, err
}
