package scenario_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kindkit/kindkit/scenario"
)

const (
	ack       = `{"type":"immediate_response","requestId":"r","status":200,"message":"OK","data":{"sessionId":"s-1","list":[{"id":"a"},{"id":"b"}],"n":10}}`
	ack202    = `{"type":"immediate_response","requestId":"r2","status":202,"message":"Processing your request...","data":{}}`
	done      = `{"type":"eventual_response","requestId":"r","status":200,"data":{"requestId":"r","status":200}}`
	errEvent  = `{"type":"error","requestId":"r","error":{"code":"VALIDATION_ERROR","message":"x"}}`
	pong      = `{"type":"pong","requestId":"p","timestamp":1}`
	keepalive = `{"type":"keepalive","requestId":"r","data":{"requestId":"r"}}`
)

func tok(text string) string {
	b, _ := json.Marshal(map[string]any{"type": "stream_token", "requestId": "r", "token": text, "data": map[string]any{"requestId": "r", "token": text}})
	return string(b)
}

// oneStep is a single ping step with the given expect list.
func oneStep(expect string) string {
	return `[{"send":{"action":"ping","requestId":"r"},"expect":` + expect + `}]`
}

func TestRunMatchers(t *testing.T) {
	t.Parallel()
	type failure struct {
		step, matcher int
		msg           string
		event         string // "" when no event is shown
	}
	cases := map[string]struct {
		steps   string
		replies [][]any
		want    *failure // nil: the run passes
	}{
		"type matches": {
			steps:   oneStep(`[{"type":"immediate_response"}]`),
			replies: [][]any{{ack}},
		},
		"wrong type fails": {
			steps:   oneStep(`[{"type":"eventual_response"}]`),
			replies: [][]any{{ack}},
			want:    &failure{0, 0, `type: expected "eventual_response", got "immediate_response"`, ack},
		},
		"status compares numbers by value": {
			steps:   oneStep(`[{"type":"immediate_response","status":200.0},{"type":"x","status":200}]`),
			replies: [][]any{{ack, `{"type":"x","status":2e2}`}},
		},
		"status differs": {
			steps:   oneStep(`[{"type":"immediate_response","status":202}]`),
			replies: [][]any{{ack}},
			want:    &failure{0, 0, `status: expected 202, got 200`, ack},
		},
		"status absent": {
			steps:   oneStep(`[{"type":"error","status":200}]`),
			replies: [][]any{{errEvent}},
			want:    &failure{0, 0, `status: the event has none`, errEvent},
		},
		"statusGte holds": {
			steps:   oneStep(`[{"type":"immediate_response","statusGte":200}]`),
			replies: [][]any{{ack}},
		},
		"statusGte fails": {
			steps:   oneStep(`[{"type":"immediate_response","statusGte":201}]`),
			replies: [][]any{{ack}},
			want:    &failure{0, 0, `status: expected >= 201, got 200`, ack},
		},
		"assert indexes objects by key and arrays by position": {
			steps:   oneStep(`[{"type":"immediate_response","assert":{"requestId":"r","data.sessionId":"s-1","data.list.1.id":"b","data.n":10.0}}]`),
			replies: [][]any{{ack}},
		},
		"assert compares structure, not key order": {
			steps:   oneStep(`[{"type":"immediate_response","assert":{"data":{"n":1e1,"list":[{"id":"a"},{"id":"b"}],"sessionId":"s-1"}}}]`),
			replies: [][]any{{ack}},
		},
		"assert value differs": {
			steps:   oneStep(`[{"type":"immediate_response","assert":{"data.sessionId":"s-2"}}]`),
			replies: [][]any{{ack}},
			want:    &failure{0, 0, `assert data.sessionId: expected "s-2", got "s-1"`, ack},
		},
		"assert JSON type differs": {
			steps:   oneStep(`[{"type":"immediate_response","assert":{"data.n":"10"}}]`),
			replies: [][]any{{ack}},
			want:    &failure{0, 0, `assert data.n: expected "10", got 10`, ack},
		},
		"assert array differs in length": {
			steps:   oneStep(`[{"type":"immediate_response","assert":{"data.list":[{"id":"a"}]}}]`),
			replies: [][]any{{ack}},
			want:    &failure{0, 0, `assert data.list: expected [{"id":"a"}], got [{"id":"a"},{"id":"b"}]`, ack},
		},
		"assert missing key fails": {
			steps:   oneStep(`[{"type":"immediate_response","assert":{"data.nope":null}}]`),
			replies: [][]any{{ack}},
			want:    &failure{0, 0, `assert data.nope: missing (data has no key "nope")`, ack},
		},
		"assert index past the end fails": {
			steps:   oneStep(`[{"type":"immediate_response","assert":{"data.list.2.id":"c"}}]`),
			replies: [][]any{{ack}},
			want:    &failure{0, 0, `assert data.list.2.id: missing (data.list has 2 elements, no index 2)`, ack},
		},
		"assert non-index segment on an array fails": {
			steps:   oneStep(`[{"type":"immediate_response","assert":{"data.list.first":"a"}}]`),
			replies: [][]any{{ack}},
			want:    &failure{0, 0, `assert data.list.first: missing (data.list is an array, and "first" is not an index)`, ack},
		},
		"assert through a scalar fails": {
			steps:   oneStep(`[{"type":"immediate_response","assert":{"data.sessionId.0":"s"}}]`),
			replies: [][]any{{ack}},
			want:    &failure{0, 0, `assert data.sessionId.0: missing (data.sessionId is a string, not an object or array)`, ack},
		},
		"every difference is listed": {
			steps:   oneStep(`[{"type":"immediate_response","status":202,"assert":{"requestId":"x","data.n":11}}]`),
			replies: [][]any{{ack}},
			want:    &failure{0, 0, `status: expected 202, got 200; assert data.n: expected 11, got 10; assert requestId: expected "x", got "r"`, ack},
		},
		"capture of a missing path fails": {
			steps:   oneStep(`[{"type":"immediate_response","capture":{"id":"data.id"}}]`),
			replies: [][]any{{ack}},
			want:    &failure{0, 0, `capture id: data.id missing (data has no key "id")`, ack},
		},
		"repeat accumulates a top-level field": {
			steps:   oneStep(`[{"type":"immediate_response"},{"type":"stream_token","repeat":true,"accumulate":"token","assertAccumulated":"Hello — world"},{"type":"eventual_response","status":200}]`),
			replies: [][]any{{ack, tok("Hel"), tok("lo — "), tok("world"), done}},
		},
		"repeat accumulation differs": {
			steps:   oneStep(`[{"type":"stream_token","repeat":true,"accumulate":"token","assertAccumulated":"Hello!"}]`),
			replies: [][]any{{tok("Hel"), tok("lo"), done}},
			want:    &failure{0, 0, `assertAccumulated: expected "Hello!", got "Hello" from 2 "stream_token" event(s); the run ended at the event below`, done},
		},
		"repeat matches zero events": {
			steps:   oneStep(`[{"type":"stream_token","repeat":true,"accumulate":"token"},{"type":"eventual_response"}]`),
			replies: [][]any{{done}},
		},
		"repeat of zero events still checks the accumulation": {
			steps:   oneStep(`[{"type":"stream_token","repeat":true,"accumulate":"token","assertAccumulated":"Hi"}]`),
			replies: [][]any{{done}},
			want:    &failure{0, 0, `assertAccumulated: expected "Hi", got "" from 0 "stream_token" event(s); the run ended at the event below`, done},
		},
		"repeat checks every event of the run": {
			steps:   oneStep(`[{"type":"stream_token","repeat":true,"assert":{"requestId":"r"}}]`),
			replies: [][]any{{tok("a"), `{"type":"stream_token","requestId":"other","token":"b"}`}},
			want:    &failure{0, 0, `repeated event #2: assert requestId: expected "r", got "other"`, `{"type":"stream_token","requestId":"other","token":"b"}`},
		},
		"accumulate needs a string": {
			steps:   oneStep(`[{"type":"stream_token","repeat":true,"accumulate":"token"}]`),
			replies: [][]any{{`{"type":"stream_token","data":{"token":"a"}}`}},
			want:    &failure{0, 0, `accumulate: top-level "token" of event #1 is not a string`, `{"type":"stream_token","data":{"token":"a"}}`},
		},
		"the event ending a run goes to the next step": {
			steps: `[{"send":{"action":"a"},"expect":[{"type":"immediate_response"},{"type":"stream_token","repeat":true}]},
			         {"send":{"action":"b"},"expect":[{"type":"eventual_response"},{"type":"immediate_response","status":202}]}]`,
			replies: [][]any{{ack, tok("a"), done}, {ack202}},
		},
		"leftover events are seen by the next step": {
			steps: `[{"send":{"action":"a"},"expect":[{"type":"immediate_response"}]},
			         {"send":{"action":"b"},"expect":[{"type":"error"},{"type":"immediate_response","status":202}]}]`,
			replies: [][]any{{ack, errEvent}, {ack202}},
		},
		"a stray event fails the next step": {
			steps: `[{"send":{"action":"cancel"},"expect":[]},
			         {"send":{"action":"b"},"expect":[{"type":"immediate_response"}]}]`,
			replies: [][]any{{errEvent}, {ack}},
			want:    &failure{1, 0, `type: expected "immediate_response", got "error"`, errEvent},
		},
		"leftovers after the final step are ignored": {
			steps:   oneStep(`[{"type":"immediate_response"}]`),
			replies: [][]any{{ack, errEvent, done}},
		},
		"keepalive and pong are skipped": {
			steps:   oneStep(`[{"type":"immediate_response"},{"type":"stream_token","repeat":true,"accumulate":"token","assertAccumulated":"ab"},{"type":"eventual_response"}]`),
			replies: [][]any{{pong, keepalive, ack, pong, tok("a"), keepalive, tok("b"), pong, done}},
		},
		"a frame that is not an object fails": {
			steps:   oneStep(`[{"type":"immediate_response"}]`),
			replies: [][]any{{`[1,2]`}},
			want:    &failure{0, 0, `waiting for a "immediate_response" event: a frame that is not a JSON object`, `[1,2]`},
		},
		"a binary frame fails": {
			steps:   oneStep(`[{"type":"immediate_response"}]`),
			replies: [][]any{{binary("{}")}},
			want:    &failure{0, 0, `waiting for a "immediate_response" event: a binary frame (2 bytes), not a JSON text event`, `{}`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := parse(t, `{"name":"t","steps":`+tc.steps+`}`)
			f := newFake(t, tc.replies...)
			err := s.Run(ctxFor(t), f.URL, scenario.WithEventTimeout(2*time.Second), scenario.WithLogf(t.Logf))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				return
			}
			var se *scenario.StepError
			if !errors.As(err, &se) {
				t.Fatalf("Run = %v, want a *StepError", err)
			}
			got := failure{se.Step, se.Matcher, se.Msg, string(se.Event)}
			if diff := cmp.Diff(*tc.want, got, cmp.AllowUnexported(failure{})); diff != "" {
				t.Errorf("StepError (-want +got):\n%s\nfull error: %v", diff, err)
			}
			if se.Scenario != "test.json" || se.Expected == "" {
				t.Errorf("StepError names scenario %q and expected %q", se.Scenario, se.Expected)
			}
		})
	}
}

func TestRunErrorText(t *testing.T) {
	t.Parallel()
	s := parse(t, `{"name":"t","steps":`+oneStep(`[{"type":"immediate_response","status":202}]`)+`}`)
	f := newFake(t, []any{ack})
	err := s.Run(ctxFor(t), f.URL)
	want := "test.json: steps[0].expect[0]: status: expected 202, got 200\n" +
		"\texpected: {\"type\":\"immediate_response\",\"status\":202}\n" +
		"\tevent:    " + ack
	if err == nil || err.Error() != want {
		t.Errorf("error text:\n%v\nwant:\n%s", err, want)
	}
}

func TestRunCaptureAndSubstitute(t *testing.T) {
	t.Parallel()
	s := parse(t, `{"name":"t","steps":[
		{"send":{"action":"create", "requestId":"r"},
		 "expect":[{"type":"immediate_response","capture":{"sessionId":"data.sessionId","n":"data.n","first":"data.list.0"}}]},
		{"send":{"action":"use","sessionId":"{{sessionId}}",
		         "nested":{"n":"{{n}}","deeper":{"first":"{{first}}"}},
		         "list":["{{sessionId}}"],"longer":"id {{sessionId}}","brace":"{{ sessionId }}"},
		 "expect":[{"type":"immediate_response","status":202}]}]}`)
	f := newFake(t, []any{ack}, []any{ack202})
	if err := s.Run(ctxFor(t), f.URL); err != nil {
		t.Fatal(err)
	}
	got := f.received()
	if len(got) != 2 {
		t.Fatalf("server received %d frames, want 2: %q", len(got), got)
	}
	if got[0] != `{"action":"create","requestId":"r"}` {
		t.Errorf("a frame without placeholders is sent as written, compacted; got %s", got[0])
	}
	var frame any
	if err := json.Unmarshal([]byte(got[1]), &frame); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"action":    "use",
		"sessionId": "s-1",
		"nested":    map[string]any{"n": 10.0, "deeper": map[string]any{"first": map[string]any{"id": "a"}}},
		"list":      []any{"{{sessionId}}"},
		"longer":    "id {{sessionId}}",
		"brace":     "{{ sessionId }}",
	}
	if diff := cmp.Diff(want, frame); diff != "" {
		t.Errorf("substituted frame (-want +got):\n%s", diff)
	}
}

func TestRunUnknownVariable(t *testing.T) {
	t.Parallel()
	// Parse rejects this statically; a scenario built in code meets the
	// run-time check.
	s := &scenario.Scenario{Name: "coded", Steps: []scenario.Step{
		{Send: json.RawMessage(`{"action":"x","sessionId":"{{sessionId}}"}`)},
	}}
	f := newFake(t)
	err := s.Run(ctxFor(t), f.URL)
	var se *scenario.StepError
	if !errors.As(err, &se) || se.Step != 0 || se.Matcher != -1 {
		t.Fatalf("Run = %v, want a StepError at steps[0].send", err)
	}
	if want := "coded: steps[0].send: send: unknown variable {{sessionId}} (no variable is captured yet)"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	if n := len(f.received()); n != 0 {
		t.Errorf("the server received %d frames, want none", n)
	}
}

func TestRunTimeout(t *testing.T) {
	t.Parallel()
	s := parse(t, `{"name":"t","steps":`+oneStep(`[{"type":"immediate_response"}]`)+`}`)
	f := newFake(t, []any{pong, keepalive}) // skipped frames are no event
	start := time.Now()
	err := s.Run(ctxFor(t), f.URL, scenario.WithEventTimeout(100*time.Millisecond))
	if !errors.Is(err, scenario.ErrTimeout) {
		t.Fatalf("Run = %v, want ErrTimeout", err)
	}
	var se *scenario.StepError
	if !errors.As(err, &se) || se.Msg != `no "immediate_response" event within 100ms` || se.Event != nil {
		t.Errorf("StepError = %+v", se)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Run took %s with a 100ms event timeout", d)
	}
}

func TestRunTimeoutEndsARepeat(t *testing.T) {
	t.Parallel()
	// A silent stream ends a run; the run's own checks still hold, and the
	// next matcher, if any, reports the silence.
	passes := parse(t, `{"name":"t","steps":`+oneStep(`[{"type":"stream_token","repeat":true,"accumulate":"token","assertAccumulated":"ab"}]`)+`}`)
	f := newFake(t, []any{tok("a"), tok("b")})
	if err := passes.Run(ctxFor(t), f.URL, scenario.WithEventTimeout(100*time.Millisecond)); err != nil {
		t.Errorf("Run: %v", err)
	}

	fails := parse(t, `{"name":"t","steps":`+oneStep(`[{"type":"stream_token","repeat":true},{"type":"eventual_response"}]`)+`}`)
	f = newFake(t, []any{tok("a")})
	err := fails.Run(ctxFor(t), f.URL, scenario.WithEventTimeout(100*time.Millisecond))
	var se *scenario.StepError
	if !errors.As(err, &se) || se.Matcher != 1 || !errors.Is(err, scenario.ErrTimeout) {
		t.Errorf("Run = %v, want a timeout at steps[0].expect[1]", err)
	}
}

func TestRunDialError(t *testing.T) {
	t.Parallel()
	s := parse(t, `{"name":"t","steps":`+oneStep(`[]`)+`}`)
	err := s.Run(ctxFor(t), newClosedURL(t))
	var se *scenario.StepError
	if err == nil || errors.As(err, &se) {
		t.Errorf("Run against a closed port = %v, want a dial error", err)
	}
}

func TestCheckKnownDivergences(t *testing.T) {
	t.Parallel()
	const passing = `[{"type":"immediate_response"}]`
	const failing = `[{"type":"eventual_response"}]`
	cases := map[string]struct {
		listed    string // knownDivergences JSON
		expect    string
		tolerated bool
		wantErr   string // "" for no error at all
		failure   bool   // whether Failure() is non-nil
	}{
		"not listed, passes": {listed: `[]`, expect: passing},
		"not listed, fails":  {listed: `["go"]`, expect: failing, wantErr: "step", failure: true},
		"listed, fails":      {listed: `["go","kindkit"]`, expect: failing, wantErr: "step", tolerated: true},
		"listed, passes": {listed: `["kindkit"]`, expect: passing, failure: true,
			wantErr: "remove kindkit from knownDivergences in test.json — it now passes"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := parse(t, `{"name":"t","knownDivergences":`+tc.listed+`,"knownDivergencesReason":"why","steps":`+oneStep(tc.expect)+`}`)
			f := newFake(t, []any{ack})
			res := s.Check(ctxFor(t), f.URL, scenario.Lang)
			if res.Tolerated != tc.tolerated {
				t.Errorf("Tolerated = %v, want %v (Err %v)", res.Tolerated, tc.tolerated, res.Err)
			}
			if (res.Failure() != nil) != tc.failure {
				t.Errorf("Failure() = %v, want failure %v", res.Failure(), tc.failure)
			}
			switch tc.wantErr {
			case "":
				if res.Err != nil {
					t.Errorf("Err = %v, want nil", res.Err)
				}
			case "step":
				var se *scenario.StepError
				if !errors.As(res.Err, &se) {
					t.Errorf("Err = %v, want a *StepError", res.Err)
				}
			default:
				var ee *scenario.ExpiredDivergenceError
				if !errors.As(res.Err, &ee) || res.Err.Error() != tc.wantErr {
					t.Errorf("Err = %v, want %q", res.Err, tc.wantErr)
				}
			}
		})
	}

	t.Run("a run that cannot start is never tolerated", func(t *testing.T) {
		t.Parallel()
		s := parse(t, `{"name":"t","knownDivergences":["kindkit"],"knownDivergencesReason":"why","steps":`+oneStep(failing)+`}`)
		res := s.Check(ctxFor(t), newClosedURL(t), scenario.Lang)
		if res.Tolerated || res.Failure() == nil {
			t.Errorf("Check = %+v, want an untolerated dial failure", res)
		}
	})
}
