package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kindkit/kindkit/internal/mcptest"
	"github.com/kindkit/kindkit/internal/wstest"
	"github.com/kindkit/kindkit/store/storetest"
)

// TestMCPInputRequiredTwoProcesses: two kindserver processes on one
// PostgreSQL, both with the same MCP 2026-07-28 server. A question it asks
// through its result is a park like any other: each answer goes to the
// other process than the one that parked on the card, and the call
// completes there.
func TestMCPInputRequiredTwoProcesses(t *testing.T) {
	vouchers := mcptest.StartVouchers(t)
	scriptFile := filepath.Join(t.TempDir(), "mcp-script.json")
	os.WriteFile(scriptFile, []byte(`[{"kind":"toolCall","name":"vouchers__redeem","arguments":"{}","id":"`+mcpCallID+`"},{"kind":"text","text":"`+mcpReply+`"}]`), 0o644)
	dsn := storetest.PostgresDB(t)
	a := start(t, dsn, "-script", scriptFile, "-mcp", "vouchers="+vouchers.URL)
	b := start(t, dsn, "-script", scriptFile, "-mcp", "vouchers="+vouchers.URL)

	steps := []struct {
		p               *proc
		message, values string
	}{
		{b, askCode, `{"code":"NOPE"}`},
		{a, askName, `{"name":"Ada"}`},
		{b, askAgain, `{"code":"` + mcptest.VoucherCode + `"}`},
	}
	cv := openMCPConv(t, a.url)
	for i, s := range steps {
		// Each time the turn is parked on its next card, the person comes
		// back through the other process: it shows the pending card, takes
		// the answer and runs the call on.
		cv.ws.WS.CloseNow()
		cv.reconnect(s.p.url)
		cv.answer(cv.nextCard(), s.message, s.values)
		if i < len(steps)-1 {
			cv.nextCard()
		}
	}
	cv.end()
	history(t, a.url, cv.id, mcpReply)
	if all, repeated := vouchers.Retries(); vouchers.Firsts() != 1 || all != 2 || repeated != 0 {
		t.Errorf("the server got %d first calls and %d retries (%d repeated), want 1 and 2", vouchers.Firsts(), all, repeated)
	}
}

// TestMCPAskInputRequired: kindkit's own examples/mcpask, a go-sdk server
// on stdio whose tool asks through package elicit, speaks 2026-07-28 with
// kindserver: its choices question is an elicitation card; two picks for
// a single-select question are refused by the choices kind's rules on the
// server's side and asked again in a second round, with the kind's error;
// the second answer books the demo.
func TestMCPAskInputRequired(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "mcpask")
	if out, err := exec.Command("go", "build", "-o", bin, "../../examples/mcpask").CombinedOutput(); err != nil {
		t.Fatalf("build examples/mcpask: %v\n%s", err, out)
	}
	scriptFile := filepath.Join(t.TempDir(), "mcpask.json")
	os.WriteFile(scriptFile, []byte(`[{"kind":"toolCall","name":"mcpask__book_demo","arguments":"{\"topic\":\"SSO\"}","id":"call-1"},{"kind":"text","text":"Booked."}]`), 0o644)
	p := start(t, "memory", "-script", scriptFile, "-mcp", "mcpask="+bin)

	c := wstest.Dial(t, p.url)
	c.Send(`{"action":"create_conversation_session","requestId":"c","agentId":"a","supports":["mcp_elicitation"]}`)
	sid := wstest.Path(c.Expect("immediate_response")[0], "data", "sessionId").(string)
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"book me a demo"}`)
	cv := &mcpConv{t: t, ws: c, sid: sid}
	card := cv.nextCard()
	if wstest.Path(card, "spec", "server") != "mcpask" || wstest.Path(card, "spec", "requestedSchema", "properties", "Slot.options") == nil {
		t.Fatalf("card %v, want mcpask's slot question", card)
	}
	cv.answer(card, "to book your demo", `{"Slot.options":"Wed 14:30","Slot.other":"or Friday"}`)
	again := cv.nextCard()
	if msg := fmt.Sprint(wstest.Path(again, "spec", "message")); !strings.Contains(msg, "to book your demo") || msg == fmt.Sprint(wstest.Path(card, "spec", "message")) {
		t.Fatalf("second card's message %q, want the question again with the kind's error", msg)
	}
	cv.answer(again, "to book your demo", `{"Slot.other":"Friday 9:00"}`)
	var result string
	for {
		ev := c.Next()
		if r, ok := wstest.Path(ev, "data", "state", "rawResponse", "toolResult", "result").(string); ok {
			result = r
		}
		if ev["type"] == "eventual_response" {
			break
		}
	}
	if result != "Booked a demo of SSO on Friday 9:00." {
		t.Errorf("tool result %q", result)
	}
}
