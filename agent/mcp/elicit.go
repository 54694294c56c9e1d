package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
)

// An MCP server before 2026-07-28 may ask the person something in the
// middle of a tool call (elicitation/create); from 2026-07-28 on it asks
// through the call's result instead, and that question parks as data
// (rounds.go). The live question cannot be parked as data: it is a live
// request in a live session. So the call runs on in the background, as a
// liveCall, while the turn parks on an elicitation card through
// agent.AskLive; the answer's run of the tool hands the answer to the
// waiting server and follows the call on, to its result or its next
// elicitation. If this process dies, the question dies with it, and the
// tool's next run (or the engine, on reattach) says so: it never hangs
// and never pretends.

// defaultElicitTimeout bounds how long a call may wait for its
// elicitations' answers: past the engine's default park timeout.
const defaultElicitTimeout = 24*time.Hour + time.Minute

// lostResult is the tool's result when its call's question is gone.
const lostResult = "The MCP server's question (an elicitation) was lost: kindkit restarted, or the call ended, while it waited for the person's answer. Whether the tool did anything is unknown; tell the person, and call the tool again if they want to."

// liveCall is a tool call that stays open while its elicitations wait for
// a person. Its runs (the first, then one per answer) take turns, and mu
// guards what they share; open is the handler's, under the Server's mu.
// The two locks are never held together.
type liveCall struct {
	id        string
	session   *sdk.ClientSession
	asks      chan *elicitation // the server's questions, in order
	done      chan struct{}     // closed when the call returned
	abandoned chan struct{}     // closed when no run needs the call any more
	abandon   sync.Once
	cancel    context.CancelFunc // of the call's request
	answerer  *agent.Answerer    // answers the call's card from outside its runs (complete.go); nil outside a host tool call
	result    agent.Result       // set before done closes
	err       error

	mu      sync.Mutex
	handed  int          // questions answered
	pending *elicitation // the question a run asked, waiting for its answer

	open int // questions the server sent and that wait for an answer (Server.mu)
}

// elicitation is one elicitation/create of a call, and where its answer
// goes.
type elicitation struct {
	params *sdk.ElicitParams
	reply  chan elicitReply // buffered: one answer
}

type elicitReply struct {
	res *sdk.ElicitResult
	err error
}

// call runs tool name for the model's call: a new call, or the one this
// call started in an earlier run and that waits for an answer.
func (s *Server) call(ctx context.Context, name string, args json.RawMessage) (agent.Result, error) {
	info, _ := agent.CallFrom(ctx)
	s.mu.Lock()
	lc := s.calls[info.CallID]
	session := s.session
	s.mu.Unlock()
	if lc == nil {
		m, err := memoOf(agent.Memo(ctx))
		if err != nil {
			return agent.Result{}, err
		}
		if m != nil || session != nil && asksByResult(session) {
			return s.callRounds(ctx, session, m, name, args)
		}
		if info.Asked > 0 {
			return agent.Result{Text: lostResult, IsError: true}, nil
		}
		if session == nil {
			return agent.Result{}, fmt.Errorf("the MCP server %s is not connected (it is being started again); try later", s.src.Name)
		}
		lc = s.start(ctx, session, name, args, info.CallID)
	}
	return s.follow(ctx, name, lc)
}

// start sends the call, which from then on outlives the run that made it,
// up to the elicitation timeout.
func (s *Server) start(run context.Context, session *sdk.ClientSession, name string, args json.RawMessage, id string) *liveCall {
	lc := &liveCall{id: id, session: session, asks: make(chan *elicitation, 4),
		done: make(chan struct{}), abandoned: make(chan struct{})}
	lc.answerer, _ = agent.AnswererFrom(run)
	if id != "" {
		s.mu.Lock()
		s.calls[id] = lc
		s.mu.Unlock()
	}
	timeout := s.src.ElicitTimeout
	if timeout <= 0 {
		timeout = defaultElicitTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	lc.cancel = cancel
	go func() {
		defer cancel()
		res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		switch {
		case err == nil:
			lc.result = resultOf(res)
		case errors.Is(err, sdk.ErrConnectionClosed):
			lc.err = fmt.Errorf("the MCP server %s went away during the call", s.src.Name)
		default:
			lc.err = err
		}
		if err != nil {
			s.log.Warn("mcp tool call failed", "tool", name, "err", err)
		}
		close(lc.done)
		// Kept for the run an answer starts, until that run has its
		// result, nobody needs it any more, or the timeout.
		select {
		case <-lc.abandoned:
		case <-ctx.Done():
		case <-s.closing:
		}
		s.forget(lc)
	}()
	return lc
}

func (s *Server) forget(lc *liveCall) {
	s.mu.Lock()
	if s.calls[lc.id] == lc {
		delete(s.calls, lc.id)
	}
	s.mu.Unlock()
}

// follow replays the answers lc was handed in earlier runs (each earlier
// AskLive returns its stored answer), then follows the call: each
// question is asked of the person and its answer handed to the server,
// until the call returns, or a question parks the turn.
func (s *Server) follow(ctx context.Context, tool string, lc *liveCall) (agent.Result, error) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	for range lc.handed {
		if _, err := agent.AskLive(ctx, s.src.Ask.Name, nil, ""); errors.Is(err, kindkit.ErrParked) {
			return agent.Result{}, err // not replayed: this run is not the answer's
		}
	}
	for {
		if lc.pending == nil {
			select {
			case q := <-lc.asks:
				lc.pending = q
			case <-lc.done:
				lc.giveUp()
				return lc.result, lc.err
			case <-ctx.Done():
				lc.stop()
				return agent.Result{}, ctx.Err()
			}
		}
		values, err := agent.AskLive(ctx, s.src.Ask.Name, s.spec(lc.pending.params), s.src.Name+" asks, for its tool "+tool)
		if errors.Is(err, kindkit.ErrParked) {
			return agent.Result{}, err // the call waits; the answer runs the tool again
		}
		lc.pending.reply <- answerOf(values, err, isURL(lc.pending.params))
		lc.pending = nil
		lc.handed++
	}
}

// giveUp is told that no run needs lc any more: its open questions are
// answered cancel, and the call runs to its end unread (bounded by the
// timeout), so the server hears that the question was cancelled rather
// than that its call was.
func (lc *liveCall) giveUp() {
	lc.abandon.Do(func() { close(lc.abandoned) })
}

// stop gives lc up and cancels the call's request: the turn stopped, or
// the session ends.
func (lc *liveCall) stop() {
	lc.giveUp()
	lc.cancel()
}

// spec is the elicitation card's spec for a question: a form, or a link
// (only asked of a client that declared URL mode, so URLSpec is set).
func (s *Server) spec(p *sdk.ElicitParams) json.RawMessage {
	if isURL(p) {
		return s.src.Ask.URLSpec(s.src.Name, p.Message, p.URL, p.ElicitationID)
	}
	return s.src.Ask.Spec(s.src.Name, p.Message, requestedSchema(p.RequestedSchema))
}

// isURL tells a URL-mode question from a form (mode absent: form, as MCP
// says).
func isURL(p *sdk.ElicitParams) bool { return p.Mode == "url" }

// requestedSchema is the requested schema as a JSON object (the SDK hands
// it over as whatever the server sent).
func requestedSchema(v any) map[string]any {
	var m map[string]any
	if raw, err := json.Marshal(v); err == nil {
		json.Unmarshal(raw, &m)
	}
	if m == nil {
		m = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return m
}

// answerOf is the server's answer to a question from the person's: accept
// with the content, decline, or cancel when nobody answered in time. A
// question kindkit could not ask (its schema broke the kind's rules) is a
// JSON-RPC error to the server. A URL-mode question's accept (the person,
// or the server's completion notice, said done) carries no content.
func answerOf(values json.RawMessage, err error, url bool) elicitReply {
	switch {
	case err == nil && url:
		return elicitReply{res: &sdk.ElicitResult{Action: "accept"}}
	case err == nil:
		var content map[string]any
		if err := json.Unmarshal(values, &content); err != nil {
			return elicitReply{err: fmt.Errorf("kindkit: the answer is not an object: %w", err)}
		}
		return elicitReply{res: &sdk.ElicitResult{Action: "accept", Content: content}}
	case errors.Is(err, kindkit.ErrDeclined):
		return elicitReply{res: &sdk.ElicitResult{Action: "decline"}}
	case errors.Is(err, kindkit.ErrNoResponse):
		return elicitReply{res: &sdk.ElicitResult{Action: "cancel"}}
	}
	return elicitReply{err: err}
}

// elicit is the client's elicitation/create handler. MCP does not say
// which request a server's question belongs to, so it goes to the one call
// of this session that is running without an open question; with none or
// several it is cancelled, and the log says why.
func (s *Server) elicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	if req.Params == nil {
		return nil, errors.New("kindkit: elicitation without params")
	}
	if isURL(req.Params) && s.src.Ask.URLSpec == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `kindkit did not declare "url" elicitation`}
	}
	s.mu.Lock()
	var lc *liveCall
	n := 0
	for _, c := range s.calls {
		select {
		case <-c.done:
			continue
		case <-c.abandoned:
			continue
		default:
		}
		if c.session == req.Session && c.open == 0 {
			lc, n = c, n+1
		}
	}
	var link *linkWait
	if n == 1 {
		lc.open++
		link = s.linkAsked(lc, req.Params)
	}
	s.mu.Unlock()
	if n != 1 {
		s.log.Warn("mcp elicitation cancelled: it cannot be matched to one running tool call", "runningCalls", n)
		return &sdk.ElicitResult{Action: "cancel"}, nil
	}
	defer func() {
		s.mu.Lock()
		lc.open--
		s.linkGone(req.Params.ElicitationID, link)
		s.mu.Unlock()
	}()
	q := &elicitation{params: req.Params, reply: make(chan elicitReply, 1)}
	select {
	case lc.asks <- q:
	default:
		return &sdk.ElicitResult{Action: "cancel"}, nil // more open questions than a call may have
	}
	select {
	case r := <-q.reply:
		return r.res, r.err
	case <-lc.abandoned:
		return &sdk.ElicitResult{Action: "cancel"}, nil
	case <-s.closing:
		return &sdk.ElicitResult{Action: "cancel"}, nil
	case <-ctx.Done(): // the server gave up asking
		return nil, ctx.Err()
	}
}

// Abandon is told that the call id will not run again: its park was
// cancelled or withdrawn. Its open question is cancelled.
func (s *Server) Abandon(id string) {
	s.mu.Lock()
	lc := s.calls[id]
	s.mu.Unlock()
	if lc != nil {
		lc.giveUp()
	}
}

var _ agent.Abandoner = (*Server)(nil)
