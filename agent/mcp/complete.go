package mcp

import (
	"context"
	"encoding/json"
	"reflect"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kindkit/kindkit/agent"
)

// A URL-mode question (MCP 2025-11-25) sends the person to a link whose
// content kindkit never sees; its card waits for the person to say done
// or cancel. Before 2026-07-28 the server may also say that the link's
// flow is complete (notifications/elicitation/complete, naming the
// question's elicitationId): kindkit then answers the card as done, on the
// path a person's answer takes (agent.Answerer), and the call goes on as
// if the person had said so. The question is a live call's, so its notice
// reaches the process that holds the call; from 2026-07-28 on there is no
// such notice (the server finds out itself when the call is retried).
//
// A notice may come before the card is parked (the run that asks it has
// not returned yet), or even before kindkit has matched the question to
// its call: the wait then remembers it, and the answer is tried again for
// a little while.

const (
	// linkRetry and linkTries bound how long a notice keeps trying to
	// answer a card that is not parked yet.
	linkRetry = 100 * time.Millisecond
	linkTries = 50
	// earlyNotices bounds the notices kept for questions not seen yet, and
	// earlyFor how long one is kept.
	earlyNotices = 64
	earlyFor     = time.Minute
)

// linkWait is a URL-mode question of a live call that waits for its
// answer, or a notice for a question not seen yet (lc nil). It is the
// Server's, under its mu.
type linkWait struct {
	lc       *liveCall
	params   *sdk.ElicitParams
	notified bool      // the server said the flow is complete
	at       time.Time // when the early notice came
}

// linkAsked records a URL-mode question of lc that has an elicitationId,
// and answers it at once if its notice came first. It returns the wait,
// for linkGone, or nil. Called with s.mu held.
func (s *Server) linkAsked(lc *liveCall, p *sdk.ElicitParams) *linkWait {
	if !isURL(p) || p.ElicitationID == "" {
		return nil
	}
	early := s.links[p.ElicitationID]
	w := &linkWait{lc: lc, params: p}
	s.links[p.ElicitationID] = w
	if early != nil && early.lc == nil {
		w.notified = true
		go s.answerLink(p.ElicitationID, w)
	}
	return w
}

// linkGone forgets w, the question's answer was handed to the server.
// Called with s.mu held.
func (s *Server) linkGone(id string, w *linkWait) {
	if w != nil && s.links[id] == w {
		delete(s.links, id)
	}
}

// completed is the client's notifications/elicitation/complete handler.
// A notice for a question that is not waiting (unknown, or already
// answered) is ignored, as MCP says, once it is too old to belong to a
// question on its way.
func (s *Server) completed(_ context.Context, req *sdk.ElicitationCompleteNotificationRequest) {
	if req.Params == nil || req.Params.ElicitationID == "" {
		return
	}
	id := req.Params.ElicitationID
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.links[id]
	switch {
	case w == nil:
		if s.pruneEarly(now) < earlyNotices {
			s.links[id] = &linkWait{at: now, notified: true}
		}
	case w.lc != nil && !w.notified:
		w.notified = true
		go s.answerLink(id, w)
	}
}

// pruneEarly drops the early notices older than earlyFor and returns how
// many are left. Called with s.mu held.
func (s *Server) pruneEarly(now time.Time) (left int) {
	for id, w := range s.links {
		switch {
		case w.lc != nil:
		case now.Sub(w.at) > earlyFor:
			delete(s.links, id)
		default:
			left++
		}
	}
	return left
}

// answerLink answers the card of w's question as done, trying again while
// the card is not parked yet and w still waits.
func (s *Server) answerLink(id string, w *linkWait) {
	if w.lc.answerer == nil {
		return
	}
	want := s.spec(w.params)
	match := func(kind string, spec json.RawMessage) bool {
		return kind == s.src.Ask.Name && sameJSON(spec, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), linkTries*linkRetry+10*time.Second)
	defer cancel()
	for range linkTries {
		ok, err := w.lc.answerer.Answer(ctx, match, agent.Answer{Values: json.RawMessage(`{}`)})
		if err != nil {
			s.log.Warn("mcp elicitation's completion notice: the card could not be answered", "elicitationId", id, "err", err)
			return
		}
		if ok {
			s.log.Info("mcp elicitation completed by the server's notice", "elicitationId", id)
			return
		}
		s.mu.Lock()
		waiting := s.links[id] == w
		s.mu.Unlock()
		if !waiting {
			return // answered otherwise
		}
		select {
		case <-time.After(linkRetry):
		case <-w.lc.abandoned:
			return
		case <-s.closing:
			return
		}
	}
	s.log.Warn("mcp elicitation's completion notice: its card was not found", "elicitationId", id)
}

// sameJSON tells whether two JSON texts hold the same value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
