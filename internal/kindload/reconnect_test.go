package kindload

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/kindkit/kindkit/internal/demo"
	"github.com/kindkit/kindkit/internal/servertest"
)

// startKindkit serves a real kindkit server (demo model, memory store)
// in-process on a loopback port until the test ends, and returns its
// address.
func startKindkit(t *testing.T) string {
	t.Helper()
	return startServer(t, servertest.Config{Model: demo.Model{}})
}

// startServer serves a kindkit server made from cfg in-process on a
// loopback port until the test ends, and returns its address.
func startServer(t testing.TB, cfg servertest.Config) string {
	t.Helper()
	s := servertest.Start(t, cfg, nil)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("kindkit shutdown: %v", err)
		}
	})
	return s.Addr()
}

func TestReconnectAgainstKindkit(t *testing.T) {
	addr := startKindkit(t)
	var r ReconnectReport
	run(t, &r, "-addr", addr, "-reconnect", "50", "-dial-c", "10", "-tail")
	if r.Parked != 50 || r.Resumed != 50 || r.Failed != 0 || r.OrderViolations != 0 {
		t.Errorf("parked %d resumed %d failed %d violations %d, want 50 50 0 0 (failures %v %v, violations %v)",
			r.Parked, r.Resumed, r.Failed, r.OrderViolations, r.FailureSamples, r.FailureExamples, r.ViolationSamples)
	}
	if r.CardP50Ms <= 0 || r.CardP99Ms < r.CardP50Ms || r.ResumeP50Ms <= 0 || r.ResumeP99Ms < r.ResumeP50Ms {
		t.Errorf("latencies %+v", r)
	}
	if r.ResumesPerSec <= 0 {
		t.Errorf("resumes/s %v", r.ResumesPerSec)
	}
}

// The canned floor keeps nothing: a resume lands in a fresh conversation,
// and every session fails at that step, with the frame that shows it.
func TestReconnectFailuresAreCounted(t *testing.T) {
	addr := startCanned(t)
	r, err := RunReconnect(context.Background(), Config{Addr: addr, Path: "/ws", Reconnect: 6, DialConcurrency: 3, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r.Parked != 6 || r.Resumed != 0 || r.Failed != 6 {
		t.Errorf("parked %d resumed %d failed %d, want 6 0 6", r.Parked, r.Resumed, r.Failed)
	}
	const reason = "reconnect, create_conversation_session: resumed into another conversation"
	if r.FailureSamples[reason] != 6 || len(r.FailureSamples) != 1 {
		t.Errorf("failures %v, want 6× %q", r.FailureSamples, reason)
	}
	if f := r.FailureExamples[reason]; !strings.Contains(f, `"conversationId"`) {
		t.Errorf("no frame for %q: %v", reason, r.FailureExamples)
	}
	var out strings.Builder
	r.Print(&out)
	if !strings.Contains(out.String(), reason) || !strings.Contains(out.String(), "failed 6") {
		t.Errorf("summary:\n%s", out.String())
	}
}

func TestReconnectFlags(t *testing.T) {
	for _, args := range [][]string{{"-reconnect", "3", "-hold", "3"}, {"-reconnect", "-1"}} {
		var stderr strings.Builder
		if code := Run(context.Background(), args, new(strings.Builder), &stderr); code != 2 {
			t.Errorf("kindload %q: exit %d, want 2 (%s)", args, code, stderr.String())
		}
	}
}

// fakeResumer serves the reconnect flow with the frames of check_test.go
// (turn "T" becomes the last send_message's requestId): every conversation
// is "c1" and parks interaction "i1"; it keeps no state beyond that. With
// cardFirst a resume gets the card before its reply; with card it gets
// that frame as the card.
func fakeResumer(t *testing.T, cardFirst bool, card string) string {
	t.Helper()
	var (
		next atomic.Int64
		mu   sync.Mutex
		turn string // the requestId of the last send_message
	)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx := r.Context()
		send := func(f string) {
			mu.Lock()
			f = strings.ReplaceAll(f, `"T"`, `"`+turn+`"`)
			mu.Unlock()
			ws.Write(ctx, websocket.MessageText, []byte(f))
		}
		for {
			_, b, err := ws.Read(ctx)
			if err != nil {
				return
			}
			var f struct{ Action, RequestID, ConversationID string }
			json.Unmarshal(b, &f)
			reply := `{"type":"immediate_response","requestId":"` + f.RequestID + `","status":200,"data":{"sessionId":"s` +
				strconv.FormatInt(next.Add(1), 10) + `","conversationId":"c1"}}`
			switch {
			case f.Action == "create_conversation_session" && f.ConversationID == "":
				send(reply)
			case f.Action == "create_conversation_session" && cardFirst:
				send(card)
				send(reply)
			case f.Action == "create_conversation_session":
				send(reply)
				send(card)
			case f.Action == "send_message":
				mu.Lock()
				turn = f.RequestID
				mu.Unlock()
				send(ack202)
				send(park)
				send(call)
			case f.Action == "submit_interaction":
				for _, fr := range []string{ack200, result, token, eventual} {
					send(fr)
				}
			}
		}
	}))
	t.Cleanup(hs.Close)
	return hs.Listener.Addr().String()
}

func TestReconnectChecks(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cardFirst  bool
		card       string // "" for the right one
		violation  string
		failure    string
		frameWants string
	}{
		{name: "card before the reply", cardFirst: true,
			violation: "interaction_required before the create_conversation_session reply"},
		{name: "another interactionId", card: strings.Replace(park, `"i1"`, `"i2"`, 1),
			failure:    "reconnect, wait for the card: interaction_required with another interactionId",
			frameWants: `"interactionId":"i2"`},
		{name: "a resumed stream instead of the card", card: result,
			failure:    "reconnect, wait for the card: unexpected toolResult stream_chunk (requestId the turn's)",
			frameWants: `"toolResult"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			card := tc.card
			if card == "" {
				card = park
			}
			addr := fakeResumer(t, tc.cardFirst, card)
			r, err := RunReconnect(context.Background(), Config{Addr: addr, Path: "/ws", Reconnect: 1, DialConcurrency: 1, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if tc.failure == "" && (r.Resumed != 1 || r.Failed != 0) {
				t.Errorf("resumed %d failed %d: %v %v", r.Resumed, r.Failed, r.FailureSamples, r.FailureExamples)
			}
			if tc.failure != "" && r.FailureSamples[tc.failure] != 1 {
				t.Errorf("failures %v, want %q", r.FailureSamples, tc.failure)
			}
			if tc.frameWants != "" && !strings.Contains(r.FailureExamples[tc.failure], tc.frameWants) {
				t.Errorf("frame %q, want one with %s", r.FailureExamples[tc.failure], tc.frameWants)
			}
			if tc.violation != "" && r.ViolationSamples[tc.violation] != 1 {
				t.Errorf("violations %v, want %q", r.ViolationSamples, tc.violation)
			}
		})
	}
}
