package kindload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// ReconnectReport is what reconnect mode measured. Its JSON is flat (but
// for the samples), so a shell script can pick fields out of it.
type ReconnectReport struct {
	Mode      string `json:"mode"`
	Addr      string `json:"addr"`
	Reconnect int    `json:"reconnect"`
	// Parked sessions reached interaction_required and the raise's
	// toolCall chunk; each of them had its socket dropped.
	Parked int `json:"parked"`
	// Resumed sessions went through every step: same conversation, same
	// card, the submit's ack and the rest of the turn.
	Resumed         int `json:"resumed"`
	Failed          int `json:"failed"`
	OrderViolations int `json:"orderViolations"`
	ServerPID       int `json:"serverPid,omitempty"`

	ParkSeconds   float64 `json:"parkSeconds"`
	ResumeSeconds float64 `json:"resumeSeconds"`
	ResumesPerSec float64 `json:"resumesPerSec"`
	ParkP50Ms     float64 `json:"parkP50Ms"`
	ParkP99Ms     float64 `json:"parkP99Ms"`
	// From writing create_conversation_session (with the conversationId)
	// on the new socket to reading interaction_required again; the dial
	// is left out, as in the other modes.
	CardP50Ms float64 `json:"cardP50Ms"`
	CardP99Ms float64 `json:"cardP99Ms"`
	CardMaxMs float64 `json:"cardMaxMs"`
	// From writing submit_interaction on the new socket to reading the
	// turn's eventual_response.
	ResumeP50Ms float64 `json:"resumeP50Ms"`
	ResumeP99Ms float64 `json:"resumeP99Ms"`
	ResumeMaxMs float64 `json:"resumeMaxMs"`
	// Server CPU (utime+stime) per parked session: parking it, and then
	// everything from the drop to the eventual_response. Absent when the
	// server's pid is unknown.
	ServerCPUMsPerPark   *float64 `json:"serverCpuMsPerPark,omitempty"`
	ServerCPUMsPerResume *float64 `json:"serverCpuMsPerResume,omitempty"`

	// FailureSamples counts the failures by stage and reason;
	// FailureExamples holds, for a reason caused by a frame, the first such
	// frame.
	FailureSamples   map[string]int    `json:"errorSamples,omitempty"`
	FailureExamples  map[string]string `json:"failureExamples,omitempty"`
	ViolationSamples map[string]int    `json:"violationSamples,omitempty"`
}

// RunReconnect runs reconnect mode: park cfg.Reconnect sessions, each on
// its own socket; drop every socket without a close handshake; then for
// each open a new socket, resume the conversation (without supports, so
// the stored capabilities apply), expect the same card again, submit it
// with the new session and read the rest of the turn.
func RunReconnect(ctx context.Context, cfg Config) (*ReconnectReport, error) {
	if cfg.Reconnect < 1 {
		return nil, fmt.Errorf("-reconnect must be at least 1")
	}
	if cfg.DialConcurrency < 1 {
		cfg.DialConcurrency = 1
	}
	pid := serverPID(ctx, cfg)
	cpu := func() (time.Duration, bool) {
		if pid == 0 {
			return 0, false
		}
		c, err := procCPU(pid)
		return c, err == nil
	}
	cpu0, cpuOK := cpu()
	if pid != 0 && !cpuOK {
		return nil, fmt.Errorf("server pid %d: no /proc/%d/stat (is it on this machine?)", pid, pid)
	}

	// Park.
	var t tally
	sessions := make([]*session, cfg.Reconnect)
	start := time.Now()
	each(cfg.Reconnect, cfg.DialConcurrency, func(i int) {
		if ctx.Err() != nil {
			t.finish(restage("park", ctx.Err()), nil)
			return
		}
		pctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
		s, err := dial(pctx, cfg.url(), fmt.Sprintf("r%d", i))
		if err != nil {
			t.finish(restage("park", err), nil)
			return
		}
		lat, err := s.start(pctx)
		if err == nil && s.convID == "" {
			err = failed("create_conversation_session", errors.New("reply without a conversationId"))
		}
		if err != nil {
			s.ws.CloseNow()
			t.finish(restage("park", err), &s.chk)
			return
		}
		t.parked(lat)
		sessions[i] = s
	})
	parkTime := time.Since(start)
	cpu1, _ := cpu()

	// Drop every socket at once: no close handshake, no waiting.
	parked := 0
	for _, s := range sessions {
		if s != nil {
			s.ws.CloseNow()
			parked++
		}
	}

	// Reconnect, resume, submit, and close each new socket when its turn
	// is done.
	start = time.Now()
	each(len(sessions), cfg.DialConcurrency, func(i int) {
		s := sessions[i]
		if s == nil {
			return
		}
		rctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
		err := s.reconnect(rctx, cfg, &t)
		t.finish(err, &s.chk)
	})
	resumeTime := time.Since(start)
	cpu2, _ := cpu()

	r := &ReconnectReport{Mode: "reconnect", Addr: cfg.Addr, Reconnect: cfg.Reconnect,
		Parked: parked, Resumed: t.ok, Failed: cfg.Reconnect - t.ok, OrderViolations: t.violations, ServerPID: pid,
		ParkSeconds: parkTime.Seconds(), ResumeSeconds: resumeTime.Seconds(),
		FailureSamples: t.errMsgs, FailureExamples: t.examples, ViolationSamples: t.violMsgs}
	if resumeTime > 0 {
		r.ResumesPerSec = float64(t.ok) / resumeTime.Seconds()
	}
	park, card, done := distOf(t.park), distOf(t.cards), distOf(t.done)
	r.ParkP50Ms, r.ParkP99Ms = ms(park.P50), ms(park.P99)
	r.CardP50Ms, r.CardP99Ms, r.CardMaxMs = ms(card.P50), ms(card.P99), ms(card.Max)
	r.ResumeP50Ms, r.ResumeP99Ms, r.ResumeMaxMs = ms(done.P50), ms(done.P99), ms(done.Max)
	if cpuOK && parked > 0 {
		p, q := ms(cpu1-cpu0)/float64(parked), ms(cpu2-cpu1)/float64(parked)
		r.ServerCPUMsPerPark, r.ServerCPUMsPerResume = &p, &q
	}
	return r, nil
}

// restage prefixes a stage error's stage with the phase it happened in.
func restage(phase string, err error) error {
	var se *stageError
	if errors.As(err, &se) {
		return &stageError{phase + ", " + se.stage, se.err}
	}
	return &stageError{phase, err}
}

// reconnect takes a parked session whose socket was dropped through a new
// socket: it resumes the conversation, waits for the same card, submits it
// and reads the rest of the turn. Latencies go to t.
func (s *session) reconnect(ctx context.Context, cfg Config, t *tally) error {
	ns, err := dial(ctx, cfg.url(), s.id)
	if err != nil {
		return restage("reconnect", err)
	}
	s.ws = ns.ws
	lat, err := s.reattach(ctx)
	if err != nil {
		s.ws.CloseNow()
		return restage("reconnect", err)
	}
	t.carded(lat)
	lat, err = s.resume(ctx, cfg.Tail)
	if err != nil {
		s.ws.CloseNow()
		return restage("resumed turn", err)
	}
	t.resumed(lat)
	s.close()
	return nil
}

// reattach resumes the session's conversation on the current socket, with
// no supports so that the stored ones apply, and reads up to both the
// reply (which must name the same conversation, with a new session id)
// and the same interaction_required again (same interactionId, the
// original turn's requestId). It returns the time from writing
// create_conversation_session to reading interaction_required.
//
// A reply that comes after the card is an order violation; a toolCall
// chunk of the raise after the card is tolerated (§4.3 shows it after the
// park event), before it a violation.
func (s *session) reattach(ctx context.Context) (time.Duration, error) {
	create := s.id + "-resume"
	oldSession := s.sessionID
	start := time.Now()
	if err := s.write(ctx, `{"action":"create_conversation_session","requestId":`+jsonString(create)+
		`,"agentId":"kindload","userName":"kindload","conversationId":`+jsonString(s.convID)+`}`); err != nil {
		return 0, failed("write create_conversation_session", err)
	}
	var lat time.Duration
	acked, carded := false, false
	for !acked || !carded {
		ev, err := s.read(ctx)
		if err != nil {
			stage := "wait for the create_conversation_session reply"
			if acked {
				stage = "wait for interaction_required after the reply"
			}
			return 0, failed(stage, err)
		}
		switch {
		case ev.Type == "keepalive" || ev.Type == "pong":
		case ev.Type == "immediate_response" && ev.RequestID == create:
			switch {
			case acked:
				return 0, failed("create_conversation_session", withFrame(errors.New("a second reply"), ev))
			case ev.Status != 200:
				return 0, failed("create_conversation_session", withFrame(fmt.Errorf("status %d", ev.Status), ev))
			case ev.Data.SessionID == "":
				return 0, failed("create_conversation_session", withFrame(errors.New("reply without a sessionId"), ev))
			case ev.Data.SessionID == oldSession:
				return 0, failed("create_conversation_session", withFrame(errors.New("reply with the dropped session's id, not a new one"), ev))
			case ev.Data.ConversationID != s.convID:
				return 0, failed("create_conversation_session", withFrame(errors.New("resumed into another conversation"), ev))
			}
			acked = true
			s.sessionID = ev.Data.SessionID
		case ev.Type == "error" && ev.RequestID == create && ev.Error != nil:
			return 0, failed("create_conversation_session", withFrame(fmt.Errorf("error %s %q", ev.Error.Code, ev.Error.Message), ev))
		case ev.Type == "interaction_required":
			id := ev.Data.Data.InteractionID
			switch {
			case carded:
				return 0, failed("after the card", withFrame(errors.New("a second interaction_required"), ev))
			case ev.RequestID != s.chk.Turn:
				return 0, failed("wait for the card", withFrame(errors.New("interaction_required without the original turn's requestId"), ev))
			case id != s.chk.InteractionID:
				return 0, failed("wait for the card", withFrame(errors.New("interaction_required with another interactionId"), ev))
			case s.chk.Kind != "" && ev.Data.Data.Kind != s.chk.Kind:
				return 0, failed("wait for the card", withFrame(fmt.Errorf("interaction_required of kind %q, parked %q", ev.Data.Data.Kind, s.chk.Kind), ev))
			}
			if !acked {
				s.chk.violate("reply first", "interaction_required before the create_conversation_session reply")
			}
			carded = true
			lat = time.Since(start)
		case ev.Type == "stream_chunk" && ev.RequestID == s.chk.Turn && ev.Data.State.RawResponse.ToolCall != nil:
			if !carded {
				s.chk.violate("card before call", "toolCall stream_chunk before interaction_required on the new socket")
			}
		default:
			stage := "wait for the card"
			if !acked {
				stage = "wait for the create_conversation_session reply"
			}
			return 0, failed(stage, withFrame(fmt.Errorf("unexpected %s (requestId %s)", ev.label(), requestIDKind(ev.RequestID, create, s.chk.Turn)), ev))
		}
	}
	return lat, nil
}

// requestIDKind words whose requestId an event carries, without the id
// itself, so that alike failures count together.
func requestIDKind(id, create, turn string) string {
	switch id {
	case create:
		return "the resume's"
	case turn:
		return "the turn's"
	case "":
		return "none"
	}
	return "another"
}

// Print writes the human summary.
func (r *ReconnectReport) Print(w io.Writer) {
	fmt.Fprintf(w, "reconnect mode against %s: %d of %d parked in %.1fs, sockets dropped, %d resumed in %.1fs (%.1f/s)\n",
		r.Addr, r.Parked, r.Reconnect, r.ParkSeconds, r.Resumed, r.ResumeSeconds, r.ResumesPerSec)
	fmt.Fprintf(w, "  failed %d, order violations %d\n", r.Failed, r.OrderViolations)
	fmt.Fprintf(w, "  send_message → interaction_required         p50 %8.3f ms  p99 %8.3f ms\n", r.ParkP50Ms, r.ParkP99Ms)
	fmt.Fprintf(w, "  resume (create) → interaction_required again p50 %8.3f ms  p99 %8.3f ms  max %8.3f ms\n", r.CardP50Ms, r.CardP99Ms, r.CardMaxMs)
	fmt.Fprintf(w, "  submit_interaction → eventual_response      p50 %8.3f ms  p99 %8.3f ms  max %8.3f ms\n", r.ResumeP50Ms, r.ResumeP99Ms, r.ResumeMaxMs)
	if r.ServerCPUMsPerPark != nil {
		fmt.Fprintf(w, "  server CPU (pid %d) %.3f ms per park, %.3f ms per drop+reconnect+resume\n", r.ServerPID, *r.ServerCPUMsPerPark, *r.ServerCPUMsPerResume)
	}
	printSamples(w, "failures", r.FailureSamples)
	if len(r.FailureExamples) > 0 {
		fmt.Fprintf(w, "  a frame for each failure:\n")
		for _, k := range sortedCounts(r.FailureSamples) {
			if f, ok := r.FailureExamples[k]; ok {
				fmt.Fprintf(w, "    %s:\n      %s\n", k, f)
			}
		}
	}
	printSamples(w, "order violations", r.ViolationSamples)
}
