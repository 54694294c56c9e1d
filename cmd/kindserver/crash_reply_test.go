package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/kindkit/kindkit/internal/wstest"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/sqlstore"
)

// slowReply is the reply of TestCrashMidReply's model, streamed over 2 s.
const slowReply = "Here is the whole answer, and it takes a while to write."

// TestCrashMidReply: a message acknowledged with its 202 is owed its
// reply, whether or not its turn ever parks. kill -9 lands 0-200 ms into
// a streamed reply (a 2 s model, no card); after the restart every
// acknowledged message has exactly one stored reply, which the restarted
// process wrote when it took the turn over. A client that closes its own
// socket mid-reply still aborts its turn, as the protocol says: no reply
// comes, and nothing is owed any more. Runs per cell: KINDKIT_CRASH_RUNS.
func TestCrashMidReply(t *testing.T) {
	runs := crashRuns(t)
	var results cellResults
	for _, storeName := range []string{"sqlite", "postgres"} {
		newStore := stores(t)[storeName]
		t.Run(storeName, func(t *testing.T) {
			var wg sync.WaitGroup
			for _, fault := range []string{"kill9", "drop"} {
				for _, ms := range []int{0, 1, 5, 50, 200} {
					wg.Go(func() {
						t.Run(fmt.Sprintf("%s-after-ack-%dms", fault, ms), func(t *testing.T) {
							results.add(t, runMidReply(t, limitPool(newStore(t)), fault, time.Duration(ms)*time.Millisecond, runs))
						})
					})
				}
			}
			wg.Wait()
		})
	}
	results.log(t, runs)
}

// cellResults collects what each cell of a crash matrix counted, the cells
// running at once, for one log of them all at the end.
type cellResults struct {
	mu    sync.Mutex
	cells map[string]fmt.Stringer // test name → its counts
}

func (r *cellResults) add(t *testing.T, got fmt.Stringer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cells == nil {
		r.cells = map[string]fmt.Stringer{}
	}
	r.cells[t.Name()] = got
}

// log logs every cell's counts, a line each, sorted by cell, the counts
// aligned.
func (r *cellResults) log(t *testing.T, runs int) {
	t.Helper()
	width := 0
	for name := range r.cells {
		width = max(width, len(name))
	}
	lines := make([]string, 0, len(r.cells))
	for _, name := range slices.Sorted(maps.Keys(r.cells)) {
		lines = append(lines, fmt.Sprintf("%-*s %s", width, name, r.cells[name]))
	}
	t.Logf("%d runs per cell:\n%s", runs, strings.Join(lines, "\n"))
}

// crashRuns is KINDKIT_CRASH_RUNS, default 10.
func crashRuns(t *testing.T) int {
	v := os.Getenv("KINDKIT_CRASH_RUNS")
	if v == "" {
		return 10
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("KINDKIT_CRASH_RUNS=%q: want a positive number", v)
	}
	return n
}

// midReply counts a cell's outcome.
type midReply struct {
	acked, replied, aborted, lost, duplicated, owed int
}

func (n midReply) String() string {
	return fmt.Sprintf("acked %d: one reply %d, aborted by their client %d, lost %d, duplicated %d; owed after settling %d",
		n.acked, n.replied, n.aborted, n.lost, n.duplicated, n.owed)
}

// runMidReply sends runs messages on a fresh process and store, then kills
// the process (kill9) or has each client close its socket (drop) delay
// after its 202, and checks the outcome.
func runMidReply(t *testing.T, dsn, fault string, delay time.Duration, runs int) midReply {
	scriptFile := filepath.Join(t.TempDir(), "slow-script.json")
	script := `[{"kind":"text","text":"` + slowReply + `","delayMs":2000}]`
	if err := os.WriteFile(scriptFile, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-script", scriptFile, "-lease-timeout", leaseTimeout.String(), "-client-frame-rate", "-1", "-conversation-rate", "-1"}
	p := start(t, dsn, args...)
	db, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	msgs := make([]*message, runs)
	var drops sync.WaitGroup
	for i := range msgs {
		m := sendMessage(t, p.url)
		msgs[i] = m
		if fault == "drop" {
			// Each client closes delay after its own 202: after all the
			// sends, on a loaded machine, the first replies had come.
			drops.Go(func() {
				m.waitAck()
				time.Sleep(delay)
				m.ws.CloseNow()
			})
		}
	}
	drops.Wait()
	if fault == "kill9" {
		for _, m := range msgs {
			m.waitAck()
		}
		time.Sleep(delay)
		p.kill9(t)
		p = start(t, dsn, args...)
	}
	for _, m := range msgs {
		m.ws.CloseNow()
		<-m.done
	}

	// Long enough for a takeover (the lease, then the 2 s model) and for a
	// reply that should not come to come.
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.conversation
	}
	deadline := time.Now().Add(settleTimeout)
	for fault == "kill9" && time.Now().Before(deadline) && !allReplied(t, db, ids) {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(leaseTimeout + 2*time.Second)

	var n midReply
	for _, m := range msgs {
		if !m.acked() {
			t.Errorf("a message was not acknowledged")
			continue
		}
		n.acked++
		h := readHistory(t, db, &conv{id: m.conversation})
		users, replies := h.count(store.RoleUser), h.count(store.RoleReply)
		switch {
		case users != 1 || replies > 1:
			n.duplicated++
		case replies == 1 && h[0].Text == slowReply:
			n.replied++
		case replies == 0 && fault == "drop":
			n.aborted++
		default:
			n.lost++
		}
	}
	owed, err := db.OwedTurns(context.Background(), time.Now().Add(time.Hour), 1000)
	if err != nil {
		t.Fatal(err)
	}
	n.owed = len(owed)
	want := midReply{acked: runs, replied: runs}
	if fault == "drop" {
		want = midReply{acked: runs, aborted: runs}
	}
	if n != want {
		t.Errorf("%s: %v, want %v", t.Name(), n, want)
	}
	return n
}

// allReplied tells whether each of the conversations has its reply.
func allReplied(t *testing.T, db *sqlstore.Store, conversations []string) bool {
	for _, id := range conversations {
		if readHistory(t, db, &conv{id: id}).count(store.RoleReply) == 0 {
			return false
		}
	}
	return true
}

// message is one run: a conversation whose message was sent on ws, which
// is read until it closes.
type message struct {
	conversation string
	ws           *websocket.Conn
	ack, done    chan struct{}
}

// sendMessage opens a conversation and sends its message, and reads its
// socket in the background, noting the 202.
func sendMessage(t *testing.T, url string) *message {
	t.Helper()
	c := wstest.Dial(t, url)
	c.Send(`{"action":"create_conversation_session","requestId":"r-create","agentId":"a"}`)
	ack := c.Expect("immediate_response")[0]
	m := &message{conversation: wstest.Path(ack, "data", "conversationId").(string), ws: c.WS,
		ack: make(chan struct{}), done: make(chan struct{})}
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + wstest.Path(ack, "data", "sessionId").(string) + `","message":"tell me everything"}`)
	go func() {
		defer close(m.done)
		for {
			_, data, err := m.ws.Read(context.Background())
			if err != nil {
				return
			}
			var ev struct {
				Type, RequestID string
				Status          int
			}
			if json.Unmarshal(data, &ev) == nil && ev.Type == "immediate_response" && ev.RequestID == "T" && ev.Status == 202 {
				close(m.ack)
			}
		}
	}()
	return m
}

// waitAck waits for the 202, or for the socket to close, or for
// wstest.Timeout.
func (m *message) waitAck() {
	select {
	case <-m.ack:
	case <-m.done:
	case <-time.After(wstest.Timeout):
	}
}

func (m *message) acked() bool {
	select {
	case <-m.ack:
		return true
	default:
		return false
	}
}
