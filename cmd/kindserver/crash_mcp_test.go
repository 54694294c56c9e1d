package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kindkit/kindkit/internal/mcptest"
	"github.com/kindkit/kindkit/internal/wstest"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/sqlstore"
)

// TestCrashMCP is the crash matrix's MCP cell: an MCP 2026-07-28 server
// (mcptest.Vouchers, a go-sdk server in this test process) asks during a
// tool call through its result: a voucher code and a name in one round,
// then, since the first code is wrong, the code again in a second round.
// Its questions are cards parked as data, so kill -9 of kindserver loses
// nothing:
//
//   - waiting: kill -9 while every conversation's first card waits; the
//     restarted process shows the same card, and the answers go to it;
//   - after-ack-round1: kill -9 the delay after the ack of the answer that
//     completes the first round (its retry may or may not have gone out);
//     the restarted process takes the turn over, retries, and shows the
//     second round's card, which is answered there;
//   - after-ack-round2: kill -9 the delay after the ack of the last
//     answer; the restarted process takes the turn over and completes the
//     call.
//
// Every conversation's call must complete with the answers ("Redeemed
// KIND-2026 for Ada."), with one reply and no step stored twice; the
// server must have seen exactly one first call per conversation (a
// question that was stored is never re-sent as a new call). A retry may
// reach the server twice when the kill lands while it is on its way (the
// spec leaves a repeated request state to the server); the count says how
// often, and the waiting cell must have none. Runs per cell:
// KINDKIT_CRASH_RUNS (default 10), on SQLite and PostgreSQL.
func TestCrashMCP(t *testing.T) {
	runs := crashRuns(t)
	var results cellResults
	for _, storeName := range []string{"sqlite", "postgres"} {
		newStore := stores(t)[storeName]
		t.Run(storeName, func(t *testing.T) {
			var wg sync.WaitGroup
			cells := []mcpCell{{after: "waiting"}}
			for _, after := range []string{"after-ack-round1", "after-ack-round2"} {
				for _, ms := range []int{0, 50, 200} {
					cells = append(cells, mcpCell{after: after, delay: time.Duration(ms) * time.Millisecond})
				}
			}
			for _, c := range cells {
				c.runs = runs
				wg.Go(func() {
					t.Run(c.name(), func(t *testing.T) {
						results.add(t, c.run(t, limitPool(newStore(t))))
					})
				})
			}
			wg.Wait()
		})
	}
	results.log(t, runs)
}

type mcpCell struct {
	after string        // "waiting", "after-ack-round1" or "after-ack-round2"
	delay time.Duration // from the last ack to the kill
	runs  int
}

func (c mcpCell) name() string {
	if c.after == "waiting" {
		return "kill9-" + c.after
	}
	return fmt.Sprintf("kill9-%s-%dms", c.after, c.delay.Milliseconds())
}

// mcpCounts are an MCP cell's outcome.
type mcpCounts struct {
	completed, firsts, retries, repeated, duplicates, wrong int
}

func (n mcpCounts) String() string {
	return fmt.Sprintf("calls completed with the answers %d; the server got first calls %d, retries %d (repeated %d); duplicated steps %d, wrong results %d",
		n.completed, n.firsts, n.retries, n.repeated, n.duplicates, n.wrong)
}

const (
	mcpCallID   = "call-1"
	mcpReply    = "Redeemed."
	mcpRedeemed = "Redeemed " + mcptest.VoucherCode + " for Ada."
	// The server's questions, as the cards show them.
	askCode  = "Which voucher code do you want to redeem?"
	askName  = "Who is redeeming it?"
	askAgain = `"NOPE" is not a valid voucher code.`
)

func (c mcpCell) run(t *testing.T, dsn string) mcpCounts {
	vouchers := mcptest.StartVouchers(t)
	scriptFile := filepath.Join(t.TempDir(), "mcp-script.json")
	script := `[{"kind":"toolCall","name":"vouchers__redeem","arguments":"{}","id":"` + mcpCallID + `"},{"kind":"text","text":"` + mcpReply + `"}]`
	if err := os.WriteFile(scriptFile, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-script", scriptFile, "-lease-timeout", leaseTimeout.String(), "-client-frame-rate", "-1", "-conversation-rate", "-1",
		"-mcp", "vouchers=" + vouchers.URL}
	p := start(t, dsn, args...)
	db, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	convs := make([]*mcpConv, c.runs)
	for i := range convs {
		convs[i] = openMCPConv(t, p.url)
	}
	// Up to the fault. A cell's conversations take their steps on this
	// goroutine (a failed read ends the test), each step for all of them
	// before the next; the answers before the kill are all sent, then all
	// their acks read, so every conversation's resumed turn is under way
	// when the kill comes.
	steps := map[string][]struct{ message, values string }{
		"after-ack-round1": {{askCode, `{"code":"NOPE"}`}, {askName, `{"name":"Ada"}`}},
		"after-ack-round2": {{askCode, `{"code":"NOPE"}`}, {askName, `{"name":"Ada"}`}, {askAgain, `{"code":"` + mcptest.VoucherCode + `"}`}},
	}[c.after]
	cards := make([]map[string]any, len(convs))
	for i, cv := range convs {
		cards[i] = cv.card
	}
	for i, s := range steps {
		for j, cv := range convs {
			if i > 0 {
				cards[j] = cv.nextCard()
			}
		}
		for j, cv := range convs {
			cv.answer(cards[j], s.message, s.values)
		}
	}
	for _, cv := range convs {
		if len(steps) > 0 {
			cv.waitAck()
		}
	}
	time.Sleep(c.delay)
	p.kill9(t)
	p = start(t, dsn, args...)

	// After it, on the restarted process.
	for _, cv := range convs {
		cv.ws.WS.CloseNow()
		switch c.after {
		case "waiting":
			cv.reconnect(p.url)
			card := cv.nextCard()
			if card["interactionId"] != cv.card["interactionId"] {
				t.Fatalf("after the restart: card %v, want the same card %v", card["interactionId"], cv.card["interactionId"])
			}
			cv.answer(card, askCode, `{"code":"NOPE"}`)
			cv.answer(cv.nextCard(), askName, `{"name":"Ada"}`)
			cv.answer(cv.nextCard(), askAgain, `{"code":"`+mcptest.VoucherCode+`"}`)
			cv.end()
		case "after-ack-round1":
			// The turn is parked on the second round's card, or taken
			// over after the lease and parked then; either way the card
			// comes to this socket.
			cv.reconnect(p.url)
			cv.answer(cv.nextCard(), askAgain, `{"code":"`+mcptest.VoucherCode+`"}`)
			cv.end()
		}
	}
	ids := make([]string, len(convs))
	for i, cv := range convs {
		ids[i] = cv.id
	}
	deadline := time.Now().Add(settleTimeout)
	for c.after == "after-ack-round2" && time.Now().Before(deadline) && !allReplied(t, db, ids) {
		time.Sleep(100 * time.Millisecond)
	}
	// A step run twice by a takeover is stored up to a lease after the
	// first: there is no event to poll for its absence.
	time.Sleep(leaseTimeout)

	n := mcpCounts{firsts: vouchers.Firsts()}
	n.retries, n.repeated = vouchers.Retries()
	for _, cv := range convs {
		h := readHistory(t, db, &conv{id: cv.id})
		n.duplicates += h.duplicates()
		results, replies := 0, 0
		for _, m := range h {
			switch {
			case m.Role == store.RoleTool && m.ToolCallID == mcpCallID:
				results++
				if m.Text != mcpRedeemed {
					n.wrong++
				}
			case m.Role == store.RoleReply:
				replies++
				if m.Text != mcpReply {
					n.wrong++
				}
			}
		}
		if results == 1 && replies == 1 {
			n.completed++
		}
	}
	if n.completed != c.runs || n.firsts != c.runs || n.duplicates > 0 || n.wrong > 0 || (c.after == "waiting" && n.repeated > 0) {
		t.Errorf("%s: %v", t.Name(), n)
	}
	return n
}

// mcpConv is one run of an MCP cell: a conversation whose turn called the
// MCP tool, and the socket it is followed on.
type mcpConv struct {
	t        *testing.T
	ws       *wstest.Client
	id, sid  string
	card     map[string]any // the first card
	submits  int
	lastSent string // the requestId of the last submit
}

// openMCPConv opens a conversation that can show elicitation cards, sends
// its message, and reads up to the first card.
func openMCPConv(t *testing.T, url string) *mcpConv {
	t.Helper()
	cv := &mcpConv{t: t, ws: wstest.Dial(t, url)}
	cv.ws.Send(`{"action":"create_conversation_session","requestId":"r-create","agentId":"a","supports":["mcp_elicitation"]}`)
	ack := cv.ws.Expect("immediate_response")[0]
	cv.id = wstest.Path(ack, "data", "conversationId").(string)
	cv.sid = wstest.Path(ack, "data", "sessionId").(string)
	cv.ws.Send(`{"action":"send_message","requestId":"T","sessionId":"` + cv.sid + `","message":"redeem my voucher"}`)
	cv.card = cv.nextCard()
	return cv
}

// reconnect follows the conversation on a new socket to url.
func (cv *mcpConv) reconnect(url string) {
	cv.ws = wstest.Dial(cv.t, url)
	cv.ws.Send(`{"action":"create_conversation_session","requestId":"r-resume","agentId":"a","conversationId":"` + cv.id + `","supports":["mcp_elicitation"]}`)
	cv.sid = wstest.Path(cv.ws.Expect("immediate_response")[0], "data", "sessionId").(string)
}

// nextCard reads the turn's events up to its next card.
func (cv *mcpConv) nextCard() map[string]any {
	cv.t.Helper()
	for {
		ev := cv.ws.Next()
		switch {
		case ev["type"] == "interaction_required":
			return wstest.Path(ev, "data", "data").(map[string]any)
		case ev["type"] == "immediate_response" && ev["status"] != float64(200) && ev["status"] != float64(202):
			cv.t.Fatalf("conversation %s: %v", cv.id, ev)
		case ev["type"] != "stream_chunk" && ev["type"] != "immediate_response":
			cv.t.Fatalf("conversation %s: got %v, want a card", cv.id, ev)
		}
	}
}

// answer checks that card is the elicitation asking message and submits
// values to it.
func (cv *mcpConv) answer(card map[string]any, message, values string) {
	cv.t.Helper()
	if card["kind"] != "elicitation" || !strings.Contains(fmt.Sprint(wstest.Path(card, "spec", "message")), message) {
		cv.t.Fatalf("conversation %s: card %v, want the question %q", cv.id, card, message)
	}
	cv.submits++
	cv.lastSent = fmt.Sprintf("S%d", cv.submits)
	cv.ws.Send(`{"action":"submit_interaction","requestId":"` + cv.lastSent + `","sessionId":"` + cv.sid + `","interactionId":"` +
		card["interactionId"].(string) + `","kind":"elicitation","values":` + values + `}`)
}

// waitAck reads up to the last submit's ack.
func (cv *mcpConv) waitAck() {
	cv.t.Helper()
	for {
		ev := cv.ws.Next()
		if ev["requestId"] != cv.lastSent {
			continue
		}
		if ev["type"] != "immediate_response" || ev["status"] != float64(200) {
			cv.t.Fatalf("conversation %s: submit answered %v", cv.id, ev)
		}
		return
	}
}

// end reads the turn to its end, which must be the script's reply.
func (cv *mcpConv) end() {
	cv.t.Helper()
	if text, end := cv.ws.Turn(); end["type"] != "eventual_response" || text != mcpReply {
		if end["type"] == "immediate_response" && end["requestId"] == cv.lastSent {
			text, end = cv.ws.Turn()
		}
		if end["type"] != "eventual_response" || text != mcpReply {
			cv.t.Fatalf("conversation %s: the turn ended with %v and text %q", cv.id, end, text)
		}
	}
}
