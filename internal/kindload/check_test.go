package kindload

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// The frames of one turn, as a server sends them; "SUBMIT" marks where the
// client writes submit_interaction.
const (
	ack202    = `{"type":"immediate_response","requestId":"T","status":202,"message":"Processing your request...","data":{}}`
	park      = `{"type":"interaction_required","requestId":"T","data":{"requestId":"T","data":{"interactionId":"i1","kind":"choices"}}}`
	call      = `{"type":"stream_chunk","requestId":"T","node":"request_choices","data":{"requestId":"T","node":"request_choices","state":{"rawResponse":{"toolCall":{"name":"request_choices","arguments":{}}}}}}`
	ack200    = `{"type":"immediate_response","requestId":"T","status":200,"message":"Interaction submitted","data":{"sessionId":"s","interactionId":"i1"}}`
	result    = `{"type":"stream_chunk","requestId":"T","node":"request_choices","data":{"requestId":"T","node":"request_choices","state":{"rawResponse":{"toolResult":{"name":"request_choices","isError":false,"result":"{\"status\":\"submitted\",\"values\":{}}"}}}}}`
	token     = `{"type":"stream_token","requestId":"T","token":"Hi ","data":{"requestId":"T","token":"Hi "}}`
	eventual  = `{"type":"eventual_response","requestId":"T","status":200,"data":{"requestId":"T","status":200,"data":{"messageId":"m"}}}`
	internal  = `{"type":"error","requestId":"T","error":{"code":"INTERNAL_ERROR","message":"Internal error processing the request."},"data":{"error":{"code":"INTERNAL_ERROR","message":"Internal error processing the request."}}}`
	pong      = `{"type":"pong","requestId":"p","timestamp":1}`
	keepalive = `{"type":"keepalive","requestId":"T","data":{"requestId":"T"}}`
	submit    = "SUBMIT"
)

// feed runs frames through a checker and returns it with the first error.
func feed(t *testing.T, frames ...string) (*Checker, error) {
	t.Helper()
	c := &Checker{Turn: "T"}
	for i, f := range frames {
		if f == submit {
			if !c.Parked() {
				t.Fatalf("frame %d: submit before the park", i)
			}
			c.Submitted()
			continue
		}
		ev, err := ParseEvent([]byte(f))
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if err := c.Event(ev); err != nil {
			return c, err
		}
	}
	return c, nil
}

func TestCheckerOrder(t *testing.T) {
	for _, tc := range []struct {
		name      string
		frames    []string
		violation string // a substring of the one violation; "" for none
		err       string // a substring of the error; "" for none
	}{
		{name: "the protocol's order",
			frames: []string{ack202, park, call, submit, ack200, result, token, token, eventual}},
		{name: "keepalive and pong are skipped",
			frames: []string{ack202, keepalive, park, pong, call, submit, ack200, result, keepalive, token, eventual, pong}},
		{name: "ack after a toolResult",
			frames:    []string{ack202, park, call, submit, result, ack200, token, eventual},
			violation: "toolResult stream_chunk before the submit's 200 ack"},
		{name: "token before the ack",
			frames:    []string{ack202, park, call, submit, token, ack200, result, eventual},
			violation: "stream_token before the submit's 200 ack"},
		{name: "eventual_response before the ack",
			frames:    []string{ack202, park, call, submit, result, token, eventual},
			violation: "before the submit's 200 ack"},
		{name: "toolCall before interaction_required",
			frames:    []string{ack202, call, park, submit, ack200, result, token, eventual},
			violation: "toolCall stream_chunk before interaction_required"},
		{name: "park before the 202",
			frames:    []string{park, ack202, call, submit, ack200, result, eventual},
			violation: "interaction_required before the 202 ack"},
		{name: "two terminal events",
			frames:    []string{ack202, park, call, submit, ack200, result, token, eventual, eventual},
			violation: "more than one terminal event"},
		{name: "an event after the terminal one",
			frames:    []string{ack202, park, call, submit, ack200, result, eventual, token},
			violation: "stream_token after the terminal event"},
		{name: "the turn fails before the park",
			frames: []string{ack202, internal},
			err:    "turn ended before the submit"},
		{name: "the turn fails after the submit",
			frames: []string{ack202, park, call, submit, ack200, internal},
			err:    "INTERNAL_ERROR"},
		{name: "another turn's event",
			frames: []string{ack202, strings.ReplaceAll(park, `"T"`, `"U"`)},
			err:    `requestId "U"`},
		{name: "the turn resumes with another outcome",
			frames: []string{ack202, park, call, submit, ack200, strings.Replace(result, `submitted`, `no_response`, 1)},
			err:    `not the submitted payload (status "no_response")`},
		{name: "a resumed stream before the submit",
			frames: []string{ack202, park, call, result},
			err:    "toolResult stream_chunk before the submit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := feed(t, tc.frames...)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one with %q", err, tc.err)
			}
			switch {
			case tc.violation == "" && len(c.Violations) > 0:
				t.Errorf("violations %q, want none", c.Violations)
			case tc.violation != "" && (len(c.Violations) != 1 || !strings.Contains(c.Violations[0], tc.violation)):
				t.Errorf("violations %q, want one with %q", c.Violations, tc.violation)
			}
			if tc.err == "" && !c.Done() {
				t.Error("the turn is not done")
			}
		})
	}
}

func TestCheckerEarlyEnd(t *testing.T) {
	_, err := feed(t, ack202, park, internal)
	if !errors.Is(err, ErrEarlyEnd) {
		t.Errorf("error %v, want ErrEarlyEnd", err)
	}
}

func TestCheckerCountsARuleOnce(t *testing.T) {
	c, err := feed(t, ack202, park, call, submit, result, token, token, ack200, eventual)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Violations) != 1 || !strings.HasPrefix(c.Violations[0], "toolResult") {
		t.Errorf("violations %q, want one, worded by the toolResult", c.Violations)
	}
}

func TestParseStatCPU(t *testing.T) {
	line := "4242 (kind server) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 75 0 0 20 0 9 0 100 1000 100 18446744073709551615\n"
	got, err := parseStatCPU([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if want := 325 * clockTick; got != want {
		t.Errorf("cpu %v, want %v", got, want)
	}
	if _, err := parseStatCPU([]byte("4242 (x) S 1")); err == nil {
		t.Error("a short line parsed")
	}
}

func TestDist(t *testing.T) {
	var s []time.Duration
	for i := 100; i >= 1; i-- {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	d := distOf(s)
	if d.P50 != 50*time.Millisecond || d.P99 != 99*time.Millisecond || d.Max != 100*time.Millisecond || d.N != 100 {
		t.Errorf("dist %+v", d)
	}
	if (distOf(nil) != Dist{}) {
		t.Error("empty dist")
	}
}
