package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/kindkit/kindkit/internal/wstest"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/sqlstore"
)

// TestCrashMatrix kills kindserver (kill -9, then a restart on the same
// store) or drops the client's socket at a range of moments around a
// submit, and checks what a person may rely on:
//
//   - a submit that got its 200 ack has its answer stored, and its turn
//     finishes with exactly one reply;
//   - no model step whose result was stored runs twice;
//   - a submit without an ack leaves the card pending: a reconnect gets the
//     same card and submitting again finishes the turn. The one exception
//     is an ack that was on its way when the socket went: then there is no
//     card, and the submit must have taken like an acked one (counted as
//     "done anyway"; one that never finishes is "lost").
//
// A cell is one store, one model speed, one moment and one fault. Its runs
// (KINDKIT_CRASH_RUNS, default 10) are concurrent conversations on one
// process: a kill cell kills once, the delay after the last submit was sent
// (or acked); a drop cell drops each socket the delay after its own. The
// cells of a store and a model speed run concurrently, each on its own
// process and store.
func TestCrashMatrix(t *testing.T) {
	runs := crashRuns(t)
	var results cellResults
	for _, storeName := range []string{"sqlite", "postgres"} {
		newStore := stores(t)[storeName]
		t.Run(storeName, func(t *testing.T) {
			for _, model := range []struct {
				name    string
				delayMs int
			}{{"fast", 0}, {"slow", 2000}} {
				t.Run(model.name, func(t *testing.T) {
					var wg sync.WaitGroup
					for _, fault := range []string{"kill9", "drop"} {
						for _, after := range []string{"sent", "ack"} {
							for _, ms := range []int{0, 1, 5, 50, 200} {
								c := cell{fault: fault, after: after, delay: time.Duration(ms) * time.Millisecond, replyDelayMs: model.delayMs, runs: runs}
								wg.Add(1)
								// t.Run from goroutines: the cells run at once,
								// whatever -parallel says.
								go func() {
									defer wg.Done()
									t.Run(fmt.Sprintf("%s-after-%s-%dms", fault, after, ms), func(t *testing.T) {
										dsn := limitPool(newStore(t))
										results.add(t, c.run(t, dsn))
									})
								}()
							}
						}
					}
					wg.Wait()
				})
			}
		})
	}
	results.log(t, runs)
}

// limitPool caps a PostgreSQL URL's connection pool, so that many
// concurrent processes stay under the server's max_connections.
func limitPool(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return dsn
	}
	q := u.Query()
	q.Set("pool_max_conns", "4")
	u.RawQuery = q.Encode()
	return u.String()
}

type cell struct {
	fault        string        // "kill9" or "drop"
	after        string        // the fault comes delay after the submit is "sent" or its "ack" is read
	delay        time.Duration // from sent or ack to the fault
	replyDelayMs int           // the model's delay for the reply after the card
	runs         int
}

// counts are a cell's outcome.
type counts struct {
	acked, answers, finished, duplicates, wrongReplies      int
	unackedPending, resubmitsDone, unackedDone, unackedLost int
}

func (n counts) String() string {
	return fmt.Sprintf("acked %d, answers stored %d, turns finished %d, duplicated steps %d, wrong replies %d; unacked: still pending %d (resubmitted and finished %d), done anyway %d, lost %d",
		n.acked, n.answers, n.finished, n.duplicates, n.wrongReplies, n.unackedPending, n.resubmitsDone, n.unackedDone, n.unackedLost)
}

// leaseTimeout is the servers' -lease-timeout: a restarted process takes a
// crashed turn over this long after its last lease.
const leaseTimeout = time.Second

// settleTimeout bounds the wait for the turns of a cell to finish after
// the fault: a restarted process takes a crashed turn over after the lease
// (1s), and the slow model needs 2s more.
const settleTimeout = 20 * time.Second

// The raise call's id in the scripted model (NewScripted's default), and
// its reply.
const (
	raiseCallID = "call-1"
	replyText   = "Pro it is."
)

// run runs the cell's conversations on a fresh process and store, injects
// the fault, and checks and counts the outcome.
func (c cell) run(t *testing.T, dsn string) counts {
	scriptFile := filepath.Join(t.TempDir(), "crash-script.json")
	script := `[
 {"kind":"toolCall","name":"request_choices","arguments":"{\"questions\":[{\"question\":\"Which plan?\",\"header\":\"Plan\",\"options\":[\"Basic\",\"Pro\"]}],\"reason\":\"to quote\"}"},
 {"kind":"text","text":"` + replyText + `","delayMs":` + strconv.Itoa(c.replyDelayMs) + `}
]`
	if err := os.WriteFile(scriptFile, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	// start passes its own -script first; the last -script wins.
	// A cell's runs all come from one address at once: the per-client
	// bounds are not what this test is about.
	args := []string{"-script", scriptFile, "-lease-timeout", leaseTimeout.String(), "-client-frame-rate", "-1", "-conversation-rate", "-1"}
	p := start(t, dsn, args...)
	db, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	convs := make([]*conv, c.runs)
	for i := range convs {
		convs[i] = openConv(t, p.url)
	}
	for _, cv := range convs {
		go cv.submit()
	}
	switch c.fault {
	case "kill9":
		for _, cv := range convs {
			cv.wait(c.after)
		}
		time.Sleep(c.delay)
		p.kill9(t)
		p = start(t, dsn, args...)
	case "drop":
		var wg sync.WaitGroup
		for _, cv := range convs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cv.wait(c.after)
				time.Sleep(c.delay)
				cv.ws.CloseNow()
			}()
		}
		wg.Wait()
	}
	for _, cv := range convs {
		cv.ws.CloseNow()
		<-cv.done
	}

	// What the client saw decides what the store must show.
	var n counts
	for _, cv := range convs {
		if cv.wasAcked() {
			n.acked++
			continue
		}
		if cv.again = resubmit(t, p.url, cv); cv.again != nil {
			n.unackedPending++
		}
	}

	// Every conversation must finish: acked ones and resubmitted ones by
	// the rules, unacked ones without a card because the submit took.
	// Through the protocol too: the resubmitting clients see their turn
	// end, and every finished conversation's history ends with the reply.
	for i, h := range waitForReplies(t, db, convs) {
		if h.count(store.RoleReply) == 0 {
			continue
		}
		if again := convs[i].again; again != nil {
			if text, end := again.Turn(); end["type"] != "eventual_response" || text != replyText {
				t.Errorf("the resubmitted turn ended with %v and text %q", end, text)
			}
		}
		history(t, p.url, convs[i].id, replyText)
	}
	// A step run twice (say, by a takeover while the step still ran) is
	// stored up to a lease and a model call after the first: there is no
	// event to poll for its absence, so the count waits that long.
	time.Sleep(leaseTimeout + time.Duration(c.replyDelayMs)*time.Millisecond)
	for _, cv := range convs {
		h := readHistory(t, db, cv)
		n.duplicates += h.duplicates()
		n.wrongReplies += h.wrongReplies()
		switch {
		case cv.wasAcked():
			if h.answered() {
				n.answers++
			}
			if h.count(store.RoleReply) > 0 {
				n.finished++
			}
		case cv.again != nil:
			if h.count(store.RoleReply) > 0 {
				n.resubmitsDone++
			}
		case h.count(store.RoleReply) > 0:
			n.unackedDone++
		default:
			n.unackedLost++
		}
	}

	if n.answers < n.acked || n.finished < n.acked || n.resubmitsDone < n.unackedPending || n.duplicates > 0 || n.wrongReplies > 0 || n.unackedLost > 0 {
		t.Errorf("%s: %v", t.Name(), n)
	}
	return n
}

// conv is one run of a cell: a conversation parked on its card, and the
// socket its submit goes out on.
type conv struct {
	id, session, interaction string
	ws                       *websocket.Conn
	sent, acked, done        chan struct{}
	again                    *wstest.Client // the client that resubmitted the card, if it was still pending
}

// openConv opens a conversation with the choices capability and parks its
// turn on the card.
func openConv(t *testing.T, url string) *conv {
	t.Helper()
	c := wstest.Dial(t, url)
	c.Send(`{"action":"create_conversation_session","requestId":"r-create","agentId":"a","supports":["choice_chips"]}`)
	ack := c.Expect("immediate_response")[0]
	cv := &conv{
		id:      wstest.Path(ack, "data", "conversationId").(string),
		session: wstest.Path(ack, "data", "sessionId").(string),
		ws:      c.WS,
		sent:    make(chan struct{}),
		acked:   make(chan struct{}),
		done:    make(chan struct{}),
	}
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + cv.session + `","message":"quote"}`)
	evs := c.Expect("immediate_response", "interaction_required", "stream_chunk")
	cv.interaction = wstest.Path(evs[1], "data", "data", "interactionId").(string)
	return cv
}

func submitFrame(session, interaction, requestID string) string {
	return `{"action":"submit_interaction","requestId":"` + requestID + `","sessionId":"` + session + `","interactionId":"` + interaction + `","kind":"choices","values":{"answers":[{"header":"Plan","options":["Pro"]}]}}`
}

// submit sends the submit and reads the socket until it closes, noting
// when the frame was sent and when its ack came.
func (cv *conv) submit() {
	defer close(cv.done)
	if err := cv.ws.Write(context.Background(), websocket.MessageText, []byte(submitFrame(cv.session, cv.interaction, "S"))); err != nil {
		return
	}
	close(cv.sent)
	for {
		_, data, err := cv.ws.Read(context.Background())
		if err != nil {
			return
		}
		var ev struct {
			Type      string `json:"type"`
			RequestID string `json:"requestId"`
			Status    int    `json:"status"`
		}
		if json.Unmarshal(data, &ev) == nil && ev.Type == "immediate_response" && ev.RequestID == "S" && ev.Status == 200 {
			close(cv.acked)
		}
	}
}

// wait waits until the submit was sent or acked, as after says, or
// until its socket closed or wstest.Timeout passed.
func (cv *conv) wait(after string) {
	reached := cv.sent
	if after == "ack" {
		reached = cv.acked
	}
	select {
	case <-reached:
	case <-cv.done:
	case <-time.After(wstest.Timeout):
	}
}

func (cv *conv) wasAcked() bool {
	select {
	case <-cv.acked:
		return true
	default:
		return false
	}
}

// resubmit reconnects to an unacked conversation. When the same card comes
// again, it submits it and returns the client, acked, to read the turn on;
// it returns nil when no card came or the first submit took it meanwhile.
func resubmit(t *testing.T, url string, cv *conv) *wstest.Client {
	t.Helper()
	c := wstest.Dial(t, url)
	c.Send(`{"action":"create_conversation_session","requestId":"r-resume","agentId":"a","conversationId":"` + cv.id + `","supports":["choice_chips"]}`)
	sid := wstest.Path(c.Expect("immediate_response")[0], "data", "sessionId").(string)
	// A re-sent card comes before the answer to the next request. A turn
	// the first submit resumed may be running: this socket follows it too
	// (its catch-up, then its events live), and nothing is to be submitted.
	c.Send(`{"action":"get_conversation_messages","requestId":"h","sessionId":"` + sid + `"}`)
	card := false
	for ev := c.Next(); ev["requestId"] != "h"; ev = c.Next() {
		switch {
		case ev["type"] == "interaction_required" && ev["requestId"] == "T" && wstest.Path(ev, "data", "data", "interactionId") == cv.interaction:
			card = true
		case ev["requestId"] != "T" || ev["type"] == "interaction_required":
			t.Fatalf("after reconnecting to an unacked submit's conversation: %v, want the same card or the resumed turn", ev)
		}
	}
	if !card {
		c.WS.CloseNow()
		return nil
	}
	c.Send(submitFrame(sid, cv.interaction, "S2"))
	ack := c.Next()
	for ack["requestId"] != "S2" {
		ack = c.Next() // the resumed turn of a first submit that took the card meanwhile
	}
	switch {
	case wstest.ErrorCode(ack) == "NO_PENDING_INTERACTION":
		// The first submit was still on its way, and took the card first.
		c.WS.CloseNow()
		return nil
	case ack["type"] != "immediate_response" || ack["status"] != float64(200):
		t.Fatalf("submitting the re-sent card: %v", ack)
	}
	return c
}

// waitForReplies polls the store until every conversation has its reply,
// or until settleTimeout, and returns their histories.
func waitForReplies(t *testing.T, db *sqlstore.Store, convs []*conv) []stored {
	t.Helper()
	out := make([]stored, len(convs))
	deadline := time.Now().Add(settleTimeout)
	for {
		finished := 0
		for i, cv := range convs {
			out[i] = readHistory(t, db, cv)
			if out[i].count(store.RoleReply) > 0 {
				finished++
			}
		}
		if finished == len(convs) || time.Now().After(deadline) {
			return out
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func readHistory(t *testing.T, db *sqlstore.Store, cv *conv) stored {
	t.Helper()
	msgs, _, err := db.Messages(context.Background(), cv.id, nil, "", 100)
	if err != nil {
		t.Fatalf("messages of %s: %v", cv.id, err)
	}
	return msgs
}

// stored is a conversation's stored messages, newest first.
type stored []*store.Message

func (h stored) count(role store.Role) int {
	n := 0
	for _, m := range h {
		if m.Role == role {
			n++
		}
	}
	return n
}

// duplicates counts the steps stored more than once. A turn stores one
// of each: the user message, the model's raise call, the answer, the
// model's reply and the reply.
func (h stored) duplicates() int {
	seen := map[string]int{}
	for _, m := range h {
		key := string(m.Role)
		if m.Role == store.RoleAssistant && len(m.ToolCalls) > 0 {
			key += " call"
		}
		seen[key]++
	}
	n := 0
	for _, c := range seen {
		n += max(c-1, 0)
	}
	return n
}

// answered tells whether the answer to the raise call is stored.
func (h stored) answered() bool {
	for _, m := range h {
		if m.Role == store.RoleTool && m.ToolCallID == raiseCallID {
			return true
		}
	}
	return false
}

// wrongReplies counts replies that are not the script's.
func (h stored) wrongReplies() int {
	n := 0
	for _, m := range h {
		if m.Role == store.RoleReply && m.Text != replyText {
			n++
		}
	}
	return n
}
