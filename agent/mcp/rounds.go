package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
)

// From MCP 2026-07-28 on, a server asks through its result instead
// (multi round-trip requests, SEP-2322): a tool call returns
// resultType "input_required" with input requests and an opaque request
// state, and the client calls the tool again, as a new request, with the
// answers (inputResponses) and the state echoed. Nothing is held open, so
// the question is data: the call keeps the requests and the state as its
// memo (agent.Checkpoint), the turn parks on one elicitation card per
// request, in the order of their ids, and the run that the last answer
// starts, on whichever process and after any restart, sends the retry.
//
// Why a memo and not replay alone: replay runs the tool again from its
// start, which here is the call to the server. A call re-sent on each
// answer would be a new call each time, with whatever it does; with the
// memo each request goes out once, and only a process that dies between
// sending a request and storing its outcome sends it again (any host
// tool's call in a resumed turn may run twice that way). A retry sent
// again carries the same answers and the same request state, which the
// spec leaves the server to accept or refuse ("servers for which a given
// requestState must be consumed at most once MUST enforce that invariant
// server-side").

// inputRequestsVersion is the first protocol version whose servers ask
// through results.
const inputRequestsVersion = "2026-07-28"

const (
	// maxRounds bounds the input-required results kindkit answers in one
	// call, as the go-sdk client's own retry loop does (10): a server that
	// keeps asking (an answer it never accepts) ends the call as a tool
	// error the model reads, not in a loop.
	maxRounds = 10
	// maxIdleRounds bounds the input-required results in a row that ask
	// for nothing (only a request state: the server shed load), which are
	// retried at once, as the go-sdk client does (3).
	maxIdleRounds = 3
)

// Methods of the input requests kindkit fulfils.
const (
	methodElicit    = "elicitation/create"
	methodListRoots = "roots/list"
)

// memo is what a call on a 2026-07-28 session keeps with its park: the
// server's latest input requests, in the order they are asked, and its
// request state, to retry with.
type memo struct {
	V        int       `json:"v"`
	Rounds   int       `json:"rounds"` // input-required results of the call so far
	Idle     int       `json:"idle"`   // of those, in a row at the end, without requests
	Requests []request `json:"requests,omitempty"`
	State    string    `json:"state,omitempty"`
}

// request is one input request of a round.
type request struct {
	ID     string          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

const memoVersion = 1

// memoOf reads a call's memo: nil when the call has none (its first run).
func memoOf(raw json.RawMessage) (*memo, error) {
	if raw == nil {
		return nil, nil
	}
	var m memo
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("mcp: the call's stored input requests: %w", err)
	}
	if m.V != memoVersion {
		return nil, fmt.Errorf("mcp: the call's stored input requests are of version %d, this kindkit reads %d", m.V, memoVersion)
	}
	return &m, nil
}

// asksByResult tells whether the session's server asks through results
// (2026-07-28 and later), rather than by elicitation/create during a call.
func asksByResult(session *sdk.ClientSession) bool {
	r := session.InitializeResult()
	return r != nil && r.ProtocolVersion >= inputRequestsVersion
}

// callRounds runs the call of tool name on a session that asks through
// results: the first run sends the call; a run with a memo asks the
// round's questions (earlier answers replayed), then retries. Each
// input-required result becomes the memo, and its first question parks
// the turn.
func (s *Server) callRounds(ctx context.Context, session *sdk.ClientSession, m *memo, name string, args json.RawMessage) (agent.Result, error) {
	if session == nil {
		return agent.Result{}, fmt.Errorf("the MCP server %s is not connected (it is being started again); try later", s.src.Name)
	}
	if !asksByResult(session) {
		return agent.Result{Text: fmt.Sprintf("The MCP server %s no longer speaks MCP %s, so the answers to its questions cannot be sent back. Whether the tool did anything is unknown; call it again if the person wants to.", s.src.Name, inputRequestsVersion), IsError: true}, nil
	}
	var (
		res *sdk.CallToolResult
		err error
	)
	if m == nil {
		m = &memo{V: memoVersion}
		res, err = session.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	}
	for {
		if res != nil || err != nil {
			switch {
			case errors.Is(err, sdk.ErrConnectionClosed):
				return agent.Result{}, fmt.Errorf("the MCP server %s went away during the call", s.src.Name)
			case err != nil:
				s.log.Warn("mcp tool call failed", "tool", name, "round", m.Rounds, "err", err)
				return agent.Result{}, err
			case !res.NeedsInput():
				return resultOf(res), nil
			}
			if err := m.next(res, s.src.Ask); err != nil {
				s.log.Warn("mcp tool call's input requests refused", "tool", name, "round", m.Rounds, "err", err)
				return agent.Result{Text: fmt.Sprintf("The MCP server %s's tool %s %v. Tell the person.", s.src.Name, name, err), IsError: true}, nil
			}
			s.log.Info("mcp tool call asks for input", "tool", name, "round", m.Rounds, "requests", len(m.Requests))
			raw, merr := json.Marshal(m)
			if merr != nil {
				return agent.Result{}, merr
			}
			if merr := agent.Checkpoint(ctx, raw); merr != nil {
				return agent.Result{}, merr
			}
		}
		var responses sdk.InputResponseMap
		if responses, err = s.fulfil(ctx, name, m); err != nil {
			return agent.Result{}, err // kindkit.ErrParked: the answer runs the tool again
		}
		res, err = session.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args, InputResponses: responses, RequestState: m.State})
	}
}

// next makes m the memo of an input-required result, or says why the call
// ends here: the bound of rounds, or a request kindkit did not declare it
// could fulfil (the server must not send those). ask: the kind of the
// cards, nil when the client declared no elicitation; with its URLSpec it
// declared URL mode too.
func (m *memo) next(res *sdk.CallToolResult, ask *CardKind) error {
	m.Rounds++
	if m.Rounds > maxRounds {
		return fmt.Errorf("asked for input %d times in one call; kindkit answers at most %d rounds", m.Rounds, maxRounds)
	}
	m.Idle++
	if len(res.InputRequests) > 0 {
		m.Idle = 0
	}
	if m.Idle > maxIdleRounds {
		return fmt.Errorf("answered %d times in a row that it needs more time (input required, nothing asked); kindkit stopped retrying", m.Idle)
	}
	m.Requests, m.State = nil, res.RequestState
	// A JSON object's members have no order: the questions are asked in
	// the order of their ids, the same on every run.
	for _, id := range slices.Sorted(maps.Keys(res.InputRequests)) {
		switch p := res.InputRequests[id].(type) {
		case *sdk.ElicitParams:
			switch {
			case ask == nil, p.Mode != "" && p.Mode != "form" && p.Mode != "url", isURL(p) && ask.URLSpec == nil:
				return fmt.Errorf("asked for an elicitation in %q mode, which kindkit did not declare", p.Mode)
			}
			raw, err := json.Marshal(p)
			if err != nil {
				return fmt.Errorf("sent an elicitation kindkit cannot read: %w", err)
			}
			m.Requests = append(m.Requests, request{ID: id, Method: methodElicit, Params: raw})
		case *sdk.ListRootsParams:
			m.Requests = append(m.Requests, request{ID: id, Method: methodListRoots})
		default:
			return fmt.Errorf("asked for %T, which kindkit did not declare", p)
		}
	}
	return nil
}

// fulfil answers the round's requests in order: roots at once (kindkit
// has none), each elicitation by a card. The first unanswered question
// parks the turn (kindkit.ErrParked); answers given in earlier runs come
// back from the store.
func (s *Server) fulfil(ctx context.Context, tool string, m *memo) (sdk.InputResponseMap, error) {
	if len(m.Requests) == 0 {
		return nil, nil
	}
	out := sdk.InputResponseMap{}
	for _, r := range m.Requests {
		switch r.Method {
		case methodListRoots:
			out[r.ID] = &sdk.ListRootsResult{Roots: []*sdk.Root{}}
		case methodElicit:
			var p sdk.ElicitParams
			if err := json.Unmarshal(r.Params, &p); err != nil {
				return nil, fmt.Errorf("mcp: the stored elicitation %s: %w", r.ID, err)
			}
			spec := s.spec(&p)
			values, err := kindkit.Ask[json.RawMessage, json.RawMessage](ctx, s.src.Ask.Name, &spec, s.src.Name+" asks, for its tool "+tool)
			if errors.Is(err, kindkit.ErrParked) {
				return nil, err
			}
			var v json.RawMessage
			if values != nil {
				v = *values
			}
			reply := answerOf(v, err, isURL(&p))
			if reply.err != nil {
				return nil, reply.err
			}
			out[r.ID] = reply.res
		default:
			return nil, fmt.Errorf("mcp: a stored input request of method %q", r.Method)
		}
	}
	return out, nil
}
