package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/kindkit/kindkit/internal/jsonx"
)

// DefaultEventTimeout bounds each wait for an event, as in the Go reference
// runner.
const DefaultEventTimeout = 10 * time.Second

// readLimit is the largest event the runner accepts.
const readLimit = 4 << 20

// Event types the runner never matches.
var skipped = []string{"keepalive", "pong"}

// ErrTimeout is the cause of a StepError when no event arrived in time.
var ErrTimeout = errors.New("timed out waiting for an event")

// Option configures Run and Check.
type Option func(*config)

type config struct {
	eventTimeout time.Duration
	logf         func(format string, args ...any)
}

// WithEventTimeout replaces DefaultEventTimeout; d must be positive.
func WithEventTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.eventTimeout = d
		}
	}
}

// WithLogf logs every frame sent (">>>") and received ("<<<"), skipped
// frames included; t.Logf fits. It is only called from Run's goroutine.
func WithLogf(logf func(format string, args ...any)) Option {
	return func(c *config) { c.logf = logf }
}

// StepError is a failed step: a frame that could not be sent, or an event
// that did not match (or did not come).
type StepError struct {
	Scenario string // the file's base name, or the scenario's name
	Step     int    // index into Steps
	Matcher  int    // index into the step's Expect; -1 when sending failed
	Expected string // the matcher as JSON; "" when sending failed
	Msg      string // what differed
	Event    []byte // the event as received; nil when none arrived
	Err      error  // the cause when there is one: ErrTimeout, a connection or context error
}

func (e *StepError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: steps[%d]", e.Scenario, e.Step)
	if e.Matcher < 0 {
		b.WriteString(".send")
	} else {
		fmt.Fprintf(&b, ".expect[%d]", e.Matcher)
	}
	b.WriteString(": " + e.Msg)
	if e.Expected != "" {
		b.WriteString("\n\texpected: " + e.Expected)
	}
	if e.Event != nil {
		b.WriteString("\n\tevent:    " + string(e.Event))
	}
	return b.String()
}

func (e *StepError) Unwrap() error { return e.Err }

// ExpiredDivergenceError is Check's verdict when a language listed in
// knownDivergences passes: the marker must go.
type ExpiredDivergenceError struct {
	Lang string
	File string // base name, e.g. "cancel-mid-turn.json"
}

func (e *ExpiredDivergenceError) Error() string {
	return fmt.Sprintf("remove %s from knownDivergences in %s — it now passes", e.Lang, e.File)
}

// Result is the outcome of Check.
type Result struct {
	// Err is the run's failure, or an *ExpiredDivergenceError; nil when the
	// run passed and the language is not listed.
	Err error
	// Tolerated reports that Err is a failure of a language listed in
	// knownDivergences: report it, do not fail on it.
	Tolerated bool
}

// Failure is the error the caller must fail on: Err unless tolerated.
func (r Result) Failure() error {
	if r.Tolerated {
		return nil
	}
	return r.Err
}

// Check runs the scenario against the server at wsURL as language lang
// (kindkit's own runs use Lang) and applies the knownDivergences rule: when
// lang is listed, a failing step is tolerated and a pass is an
// *ExpiredDivergenceError. A run that could not start (no connection, a
// cancelled ctx) is never tolerated.
func (s *Scenario) Check(ctx context.Context, wsURL, lang string, opts ...Option) Result {
	err := s.Run(ctx, wsURL, opts...)
	if !slices.Contains(s.KnownDivergences, lang) {
		return Result{Err: err}
	}
	if err == nil {
		return Result{Err: &ExpiredDivergenceError{Lang: lang, File: s.fileName()}}
	}
	var se *StepError
	if errors.As(err, &se) && ctx.Err() == nil {
		return Result{Err: err, Tolerated: true}
	}
	return Result{Err: err}
}

// Run opens one WebSocket to wsURL and runs every step on it: substitute
// the placeholders, send the frame as a text message, match the expect list
// against the events that follow (keepalive and pong skipped). Events left
// after a step's last matcher are seen by the next step; those left after the
// final step are ignored. A failed step is a *StepError.
func (s *Scenario) Run(ctx context.Context, wsURL string, opts ...Option) error {
	cfg := config{eventTimeout: DefaultEventTimeout, logf: func(string, ...any) {}}
	for _, o := range opts {
		o(&cfg)
	}
	c, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		return fmt.Errorf("%s: dial %s: %w", s.label(), wsURL, err)
	}
	c.SetReadLimit(readLimit)
	rctx, cancel := context.WithCancel(ctx)
	in := startInbox(rctx, c)
	defer func() {
		_ = c.Close(websocket.StatusNormalClosure, "scenario done")
		cancel()
		<-in.done
	}()

	r := &runner{s: s, cfg: cfg, c: c, in: in, vars: map[string]any{}}
	for i := range s.Steps {
		if err := r.step(ctx, i); err != nil {
			return err
		}
	}
	return nil
}

func (s *Scenario) label() string {
	if s.File != "" {
		return filepath.Base(s.File)
	}
	return s.Name
}

func (s *Scenario) fileName() string {
	if s.File != "" {
		return filepath.Base(s.File)
	}
	return s.Name + ".json"
}

type runner struct {
	s    *Scenario
	cfg  config
	c    *websocket.Conn
	in   *inbox
	vars map[string]any
}

func (r *runner) step(ctx context.Context, i int) error {
	st := &r.s.Steps[i]
	frame, err := substitute(st.Send, r.vars)
	if err != nil {
		return &StepError{Scenario: r.s.label(), Step: i, Matcher: -1, Msg: err.Error(), Err: err}
	}
	r.cfg.logf(">>> %s", frame)
	wctx, cancel := context.WithTimeout(ctx, r.cfg.eventTimeout)
	err = r.c.Write(wctx, websocket.MessageText, frame)
	cancel()
	if err != nil {
		return &StepError{Scenario: r.s.label(), Step: i, Matcher: -1, Msg: "send: " + err.Error(), Err: err}
	}
	for j := range st.Expect {
		if err := r.match(ctx, i, j); err != nil {
			return err
		}
	}
	return nil
}

func (r *runner) match(ctx context.Context, i, j int) error {
	m := &r.s.Steps[i].Expect[j]
	fail := func(msg string, ev *event, cause error) error {
		want, _ := jsonx.Marshal(m)
		e := &StepError{Scenario: r.s.label(), Step: i, Matcher: j, Expected: string(want), Msg: msg, Err: cause}
		if ev != nil {
			e.Event = ev.raw
		}
		return e
	}
	waitFailed := func(ev *event, err error) error {
		if errors.Is(err, ErrTimeout) {
			return fail(fmt.Sprintf("no %q event within %s", m.Type, r.cfg.eventTimeout), ev, err)
		}
		return fail(fmt.Sprintf("waiting for a %q event: %v", m.Type, err), ev, err)
	}

	if !m.Repeat {
		ev, err := r.in.next(ctx, r.cfg)
		if err != nil {
			return waitFailed(ev, err)
		}
		if msg := r.check(m, ev); msg != "" {
			return fail(msg, ev, nil)
		}
		return nil
	}

	var acc strings.Builder
	n := 0
	var last *event // the event that ended the run
	var ended error // or the wait that ended it
	for {
		ev, err := r.in.next(ctx, r.cfg)
		if err != nil {
			if ev != nil { // a frame that is no event at all
				return waitFailed(ev, err)
			}
			// A silent or closed stream ends the run; the next matcher,
			// if any, reports it.
			ended = err
			break
		}
		if ev.typ != m.Type {
			r.in.pending = ev
			last = ev
			break
		}
		if msg := r.check(m, ev); msg != "" {
			return fail(fmt.Sprintf("repeated event #%d: %s", n+1, msg), ev, nil)
		}
		if m.Accumulate != "" {
			s, ok := ev.obj[m.Accumulate].(string)
			if !ok {
				return fail(fmt.Sprintf("accumulate: top-level %q of event #%d is not a string", m.Accumulate, n+1), ev, nil)
			}
			acc.WriteString(s)
		}
		n++
	}
	if m.AssertAccumulated != nil && acc.String() != *m.AssertAccumulated {
		msg := fmt.Sprintf("assertAccumulated: expected %s, got %s from %d %q event(s)",
			strconv.Quote(*m.AssertAccumulated), strconv.Quote(acc.String()), n, m.Type)
		if last != nil {
			msg += "; the run ended at the event below"
		} else if ended != nil {
			msg += fmt.Sprintf("; the run ended: %v", ended)
		}
		return fail(msg, last, nil)
	}
	return nil
}

// check compares one event with a matcher and, when every condition holds,
// captures its variables. It returns what differed, "" for a match.
func (r *runner) check(m *Matcher, ev *event) string {
	if ev.typ != m.Type {
		return fmt.Sprintf("type: expected %q, got %s", m.Type, compactJSON(ev.obj["type"]))
	}
	var problems []string
	if m.Status != nil || m.StatusGte != nil {
		raw, present := ev.obj["status"]
		num, isNum := raw.(json.Number)
		got, err := strconv.ParseFloat(string(num), 64)
		switch {
		case !present:
			problems = append(problems, "status: the event has none")
		case !isNum || err != nil:
			problems = append(problems, "status: not a number: "+compactJSON(raw))
		default:
			if m.Status != nil && got != *m.Status {
				problems = append(problems, fmt.Sprintf("status: expected %s, got %s", formatNum(*m.Status), num))
			}
			if m.StatusGte != nil && got < *m.StatusGte {
				problems = append(problems, fmt.Sprintf("status: expected >= %s, got %s", formatNum(*m.StatusGte), num))
			}
		}
	}
	for _, path := range sortedKeys(m.Assert) {
		var want any
		if err := jsonx.Decode(m.Assert[path], &want); err != nil {
			problems = append(problems, fmt.Sprintf("assert %s: bad expected value: %v", path, err))
			continue
		}
		got, err := lookup(ev.obj, path)
		if err != nil {
			problems = append(problems, fmt.Sprintf("assert %s: missing (%v)", path, err))
			continue
		}
		if !jsonEqual(want, got) {
			problems = append(problems, fmt.Sprintf("assert %s: expected %s, got %s", path, compactJSON(want), compactJSON(got)))
		}
	}
	captures := map[string]any{}
	for _, name := range sortedKeys(m.Capture) {
		got, err := lookup(ev.obj, m.Capture[name])
		if err != nil {
			problems = append(problems, fmt.Sprintf("capture %s: %s missing (%v)", name, m.Capture[name], err))
			continue
		}
		captures[name] = got
	}
	if len(problems) > 0 {
		return strings.Join(problems, "; ")
	}
	for name, v := range captures {
		r.vars[name] = v
	}
	return ""
}

func formatNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// event is one decoded server event.
type event struct {
	raw []byte
	obj map[string]any
	typ string
}

type frame struct {
	typ  websocket.MessageType
	data []byte
	err  error
}

// inbox reads the socket in its own goroutine, so that a wait can time out
// without closing the connection (a cancelled Read would).
type inbox struct {
	frames  chan frame
	done    chan struct{}
	pending *event // handed back by a repeat run to the next matcher
	err     error  // the connection's failure, once it failed
}

func startInbox(ctx context.Context, c *websocket.Conn) *inbox {
	in := &inbox{frames: make(chan frame), done: make(chan struct{})}
	go func() {
		defer close(in.done)
		for {
			typ, data, err := c.Read(ctx)
			select {
			case in.frames <- frame{typ: typ, data: data, err: err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return in
}

// next returns the next event that is not skipped. On an error, a non-nil
// event is a frame that could not be read as an event.
func (in *inbox) next(ctx context.Context, cfg config) (*event, error) {
	if ev := in.pending; ev != nil {
		in.pending = nil
		return ev, nil
	}
	if in.err != nil {
		return nil, in.err
	}
	timer := time.NewTimer(cfg.eventTimeout)
	defer timer.Stop()
	for {
		select {
		case f := <-in.frames:
			if f.err != nil {
				in.err = fmt.Errorf("connection: %w", f.err)
				return nil, in.err
			}
			if f.typ != websocket.MessageText {
				cfg.logf("<<< binary frame, %d bytes", len(f.data))
				return &event{raw: f.data}, fmt.Errorf("a binary frame (%d bytes), not a JSON text event", len(f.data))
			}
			var v any
			err := jsonx.Decode(f.data, &v)
			obj, ok := v.(map[string]any)
			if err != nil || !ok {
				cfg.logf("<<< %s", f.data)
				return &event{raw: f.data}, fmt.Errorf("a frame that is not a JSON object")
			}
			typ, _ := obj["type"].(string)
			if slices.Contains(skipped, typ) {
				cfg.logf("<<< (skipped) %s", f.data)
				continue
			}
			cfg.logf("<<< %s", f.data)
			return &event{raw: f.data, obj: obj, typ: typ}, nil
		case <-timer.C:
			return nil, ErrTimeout
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
