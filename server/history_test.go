package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/server"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
)

// The history carries each ended card of a turn on the user message that
// started it (a kindkit extension): its kind, its canonical spec, its
// reason and its outcome, the payload the turn resumed with. A raise the
// kind refused is not a card; a withdrawn card is listed as withdrawn; the
// messages themselves are as the reference sends them, page by page. The
// same cards are read from the messages when the store has no park
// outcomes (history written before it kept them).
func TestHistoryCarriesCards(t *testing.T) {
	t.Run("parks", func(t *testing.T) { testHistoryCarriesCards(t, memstore.New()) })
	t.Run("messages", func(t *testing.T) { testHistoryCarriesCards(t, outcomesUnknown{memstore.New()}) })
}

// outcomesUnknown is a store whose parks kept no outcomes.
type outcomesUnknown struct{ store.Store }

func (outcomesUnknown) EndedParks(context.Context, string, time.Time, string, int) ([]*store.Park, error) {
	return nil, nil
}

func testHistoryCarriesCards(t *testing.T, st store.Store) {
	script, err := agent.NewScripted([]agent.ScriptEntry{
		{Kind: "toolCall", Name: "request_choices", Arguments: `{"questions":[],"reason":"to quote"}`}, // refused: no card
		{Kind: "toolCall", Name: "request_choices", Arguments: `{"questions":[{"question":"Which plan?","header":"Plan","options":["Basic","Team"]},{"question":"Which topics?","header":"Topics","options":["Pricing","Security"],"multiSelect":true}],"reason":"to quote"}`},
		{Kind: "text", Text: "Team it is."},
		{Kind: "toolCall", Name: "request_rating", Arguments: `{"question":"How did we do?","scale":{"min":1,"max":5}}`},
		{Kind: "text", Text: "No worries."},
		{Kind: "toolCall", Name: "request_choices", Arguments: `{"questions":[{"question":"Which plan?","header":"Plan","options":["Basic","Team"]}],"reason":"to check"}`},
		{Kind: "text", Text: "Noted."},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, url := startServer(t, servertest.Config{Model: script, Store: st})
	c := dial(t, url)
	sid := create(c, `["choice_chips","rating_scale","`+server.ExtHistoryCards+`"]`)
	shown := map[string]map[string]any{} // request id → the spec its card showed
	ids := map[string]string{}           // request id → its card's interactionId, as the history has it
	raise := func(rid, msg string) string {
		c.Send(`{"action":"send_message","requestId":"` + rid + `","sessionId":"` + sid + `","message":"` + msg + `"}`)
		for {
			ev := c.Next()
			if ev["type"] == "interaction_required" {
				c.Expect("stream_chunk") // the raise's call, after its card
				shown[rid] = path(ev, "data", "data", "spec").(map[string]any)
				if _, fromMessages := st.(outcomesUnknown); !fromMessages {
					ids[rid] = path(ev, "data", "data", "interactionId").(string)
				}
				return path(ev, "data", "data", "interactionId").(string)
			}
		}
	}
	iid := raise("T1", "quote me")
	c.Send(`{"action":"submit_interaction","requestId":"T1","sessionId":"` + sid + `","interactionId":"` + iid + `","values":{"answers":[{"header":"Plan","options":["Team"]},{"header":"Topics","options":["Pricing"],"other":"SSO"}]}}`)
	c.Expect("immediate_response")
	if _, end := c.Turn(); end["type"] != "eventual_response" {
		t.Fatalf("turn 1 ended with %v", end)
	}
	iid = raise("T2", "rate")
	c.Send(`{"action":"submit_interaction","requestId":"T2","sessionId":"` + sid + `","interactionId":"` + iid + `","declined":true}`)
	c.Expect("immediate_response")
	if _, end := c.Turn(); end["type"] != "eventual_response" {
		t.Fatalf("turn 2 ended with %v", end)
	}
	iid = raise("T3", "check")
	c.Send(`{"action":"send_message","requestId":"T4","sessionId":"` + sid + `","message":"Basic, please","withdrawInteraction":"` + iid + `"}`)
	c.Expect("cancelled", "immediate_response")
	if _, end := c.Turn(); end["type"] != "eventual_response" {
		t.Fatalf("turn 4 ended with %v", end)
	}

	record := func(via string) *cardRecord {
		if _, fromMessages := st.(outcomesUnknown); fromMessages {
			return nil // no park, no record
		}
		return &cardRecord{Via: via, SessionID: sid}
	}
	want := []message{
		{Direction: "outbound", Content: map[string]any{"text": "Noted."}},
		{Direction: "inbound", Content: map[string]any{"text": "Basic, please"}},
		{Direction: "inbound", Content: map[string]any{"text": "check"}, Interactions: []card{{InteractionID: ids["T3"], Kind: "choices", Reason: "to check",
			Spec:    shown["T3"],
			Outcome: map[string]any{"status": "withdrawn", "message": "The person wrote a new message instead of answering; this request was withdrawn."},
			Record:  record(agent.ViaWords)}}},
		{Direction: "outbound", Content: map[string]any{"text": "No worries."}},
		{Direction: "inbound", Content: map[string]any{"text": "rate"}, Interactions: []card{{InteractionID: ids["T2"], Kind: "rating", Reason: "to help you better",
			Spec:    shown["T2"],
			Outcome: map[string]any{"status": "declined", "message": "The visitor declined. Continue helping them without this and do not ask again this conversation."},
			Record:  record(agent.ViaCard)}}},
		{Direction: "outbound", Content: map[string]any{"text": "Team it is."}},
		{Direction: "inbound", Content: map[string]any{"text": "quote me"}, Interactions: []card{{InteractionID: ids["T1"], Kind: "choices", Reason: "to quote", Spec: shown["T1"],
			Outcome: map[string]any{"status": "submitted", "values": map[string]any{"answers": []any{
				map[string]any{"header": "Plan", "options": []any{"Team"}},
				map[string]any{"header": "Topics", "options": []any{"Pricing"}, "other": "SSO"}}}},
			Record: record(agent.ViaCard)}}},
	}
	checkHistory(t, c, dial(t, url), sid, want)
}

type card struct {
	InteractionID string         `json:"interactionId"`
	Kind          string         `json:"kind"`
	Spec          map[string]any `json:"spec"`
	Reason        string         `json:"reason"`
	Confirmation  map[string]any `json:"confirmation"`
	Outcome       map[string]any `json:"outcome"`
	Record        *cardRecord    `json:"record"`
}

// cardRecord is what the tests compare of a card's record: how it ended,
// and by which session.
type cardRecord struct {
	Via       string `json:"via"`
	SessionID string `json:"sessionId"`
}

type message struct {
	Direction    string         `json:"direction"`
	Content      map[string]any `json:"content"`
	Interactions []card         `json:"interactions"`
	keys         []string
}

// checkHistory reads session sid's history whole, then three messages at
// a time (a turn's cards are found when its user message is on a later
// page than its reply), and compares it with want, on c, which asked for
// the history's cards, and on plain, which asked for no extension and
// gets the messages as the reference has them, with no cards.
func checkHistory(t *testing.T, c, plain *client, sid string, want []message) {
	t.Helper()
	checkHistoryOn(t, c, sid, want)
	var reference []message
	for _, m := range want {
		m.Interactions = nil
		reference = append(reference, m)
	}
	checkHistoryOn(t, plain, sid, reference)
}

func checkHistoryOn(t *testing.T, c *client, sid string, want []message) {
	t.Helper()
	page := func(limit int, cursor string) ([]message, string) {
		t.Helper()
		extra := ""
		if cursor != "" {
			extra = `,"cursor":"` + cursor + `"`
		}
		c.Send(fmt.Sprintf(`{"action":"get_conversation_messages","requestId":"h","sessionId":"%s","limit":%d%s}`, sid, limit, extra))
		ev := c.Expect("immediate_response")[0]
		raw, err := json.Marshal(path(ev, "data", "messages"))
		if err != nil {
			t.Fatal(err)
		}
		var msgs []message
		var generic []map[string]any
		if err := json.Unmarshal(raw, &msgs); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &generic); err != nil {
			t.Fatal(err)
		}
		for i, m := range generic {
			for k := range m {
				msgs[i].keys = append(msgs[i].keys, k)
			}
		}
		next, _ := path(ev, "data", "nextCursor").(string)
		return msgs, next
	}
	for _, limit := range []int{50, 3} {
		var got []message
		cursor := ""
		for {
			msgs, next := page(limit, cursor)
			got = append(got, msgs...)
			if next == "" {
				break
			}
			cursor = next
		}
		for i, m := range got {
			wantKeys := []string{"content", "createdAt", "direction", "id"}
			if m.Interactions != nil {
				wantKeys = append(wantKeys, "interactions")
			}
			if diff := cmp.Diff(wantKeys, m.keys, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("limit %d: message %d has fields (-want +got):\n%s", limit, i, diff)
			}
			got[i].keys = nil
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(message{})); diff != "" {
			t.Errorf("limit %d: history (-want +got):\n%s", limit, diff)
		}
	}
}

// TestHistoryCarriesEveryCard: the cards that are not a kind's raise come
// back too, from their parks: a host tool's Ask, a write confirmation
// approved and one denied, and a card stopped with cancel. The model
// reuses its call ids from turn to turn, as the scripted one does, and
// each card stays with its own turn.
func TestHistoryCarriesEveryCard(t *testing.T) {
	script, err := agent.NewScripted(append(servertest.EveryCardTurns(),
		agent.ScriptEntry{Kind: "toolCall", Name: "request_rating", Arguments: `{"question":"How did we do?","scale":{"min":1,"max":5}}`}))
	if err != nil {
		t.Fatal(err)
	}
	_, url := startServer(t, servertest.Config{Model: script, Tools: servertest.EveryCardTools(t), ConfirmTools: []string{"delete"}})
	c := dial(t, url)
	sid := create(c, `["choice_chips","rating_scale","`+server.ExtHistoryCards+`"]`)
	until := func(rid, msg, typ string) map[string]any {
		t.Helper()
		c.Send(`{"action":"send_message","requestId":"` + rid + `","sessionId":"` + sid + `","message":"` + msg + `"}`)
		for {
			if ev := c.Next(); ev["type"] == typ {
				return ev
			}
		}
	}
	finish := func(rid string) {
		t.Helper()
		for c.Next()["type"] != "immediate_response" {
		}
		if _, end := c.Turn(); end["type"] != "eventual_response" {
			t.Fatalf("turn %s ended with %v", rid, end)
		}
	}

	ev := until("T1", "book", "interaction_required")
	slotSpec, slotID := path(ev, "data", "data", "spec").(map[string]any), path(ev, "data", "data", "interactionId").(string)
	c.Send(`{"action":"submit_interaction","requestId":"T1","sessionId":"` + sid + `","interactionId":"` + path(ev, "data", "data", "interactionId").(string) +
		`","values":{"answers":[{"header":"Slot","options":["Wed 14:30"]}]}}`)
	finish("T1")
	until("T2", "delete 42", "write_confirmation_required")
	c.Send(`{"action":"confirm_tool_action","requestId":"T2","sessionId":"` + sid + `","approved":true}`)
	finish("T2")
	until("T3", "delete 43", "write_confirmation_required")
	c.Send(`{"action":"confirm_tool_action","requestId":"T3","sessionId":"` + sid + `","approved":false}`)
	finish("T3")
	ev = until("T4", "rate", "interaction_required")
	ratingSpec, ratingID := path(ev, "data", "data", "spec").(map[string]any), path(ev, "data", "data", "interactionId").(string)
	c.Expect("stream_chunk")
	c.Send(`{"action":"cancel","requestId":"T4","sessionId":"` + sid + `"}`)
	c.Expect("cancelled")

	confirmation := func(tool string) map[string]any {
		return map[string]any{"toolId": tool, "actionDescription": "Approve calling tool '" + tool + "'?"}
	}
	checkHistory(t, c, dial(t, url), sid, []message{
		{Direction: "inbound", Content: map[string]any{"text": "rate"}, Interactions: []card{{InteractionID: ratingID, Kind: "rating", Reason: "to help you better",
			Spec: ratingSpec, Outcome: map[string]any{"status": "cancelled"}, Record: &cardRecord{Via: agent.ViaCancel}}}},
		{Direction: "outbound", Content: map[string]any{"text": "Kept."}},
		{Direction: "inbound", Content: map[string]any{"text": "delete 43"}, Interactions: []card{{Confirmation: confirmation("delete_record"),
			Outcome: map[string]any{"status": "denied"}, Record: &cardRecord{Via: agent.ViaCard, SessionID: sid}}}},
		{Direction: "outbound", Content: map[string]any{"text": "Deleted."}},
		{Direction: "inbound", Content: map[string]any{"text": "delete 42"}, Interactions: []card{{Confirmation: confirmation("delete_record"),
			Outcome: map[string]any{"status": "approved"}, Record: &cardRecord{Via: agent.ViaCard, SessionID: sid}}}},
		{Direction: "outbound", Content: map[string]any{"text": "Booked."}},
		{Direction: "inbound", Content: map[string]any{"text": "book"}, Interactions: []card{{InteractionID: slotID, Kind: "choices", Reason: "to book your demo", Spec: slotSpec,
			Outcome: map[string]any{"status": "submitted", "values": map[string]any{"answers": []any{
				map[string]any{"header": "Slot", "options": []any{"Wed 14:30"}}}}},
			Record: &cardRecord{Via: agent.ViaCard, SessionID: sid}}}},
	})
}

// endingModel stops mid-reply until cancelled on its first call, fails
// on its second, and answers on the others.
type endingModel struct {
	calls atomic.Int32
	said  chan struct{}
}

func (m *endingModel) Respond(ctx context.Context, req agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	switch m.calls.Add(1) {
	case 1:
		onText("Hello, ")
		onText("there")
		m.said <- struct{}{}
		<-ctx.Done()
		return agent.ModelResponse{}, ctx.Err()
	case 2:
		return agent.ModelResponse{}, errors.New("the model is down")
	}
	onText("Fine.")
	return agent.ModelResponse{Text: "Fine."}, nil
}

// A turn that ended without its reply, stopped or failed, is in the
// history of a socket that asked for it, with what it had said; a socket
// that did not ask gets the reference history, which leaves it out.
func TestHistoryShowsEndedTurns(t *testing.T) {
	m := &endingModel{said: make(chan struct{}, 1)}
	_, url := startServer(t, servertest.Config{Model: m})
	c, plain := dial(t, url), dial(t, url)
	sid, _, conv := tabs(t, c, dial(t, url), `["`+server.ExtEndedTurns+`"]`)
	resumeConversation(plain, conv, "")
	c.Send(`{"action":"send_message","requestId":"T1","sessionId":"` + sid + `","message":"one"}`)
	<-m.said
	c.Send(`{"action":"cancel","requestId":"T1"}`)
	for ev := nextOf(c, "T1"); ev["type"] != "cancelled"; ev = nextOf(c, "T1") {
	}
	c.Send(`{"action":"send_message","requestId":"T2","sessionId":"` + sid + `","message":"two"}`)
	for ev := nextOf(c, "T2"); ev["type"] != "error"; ev = nextOf(c, "T2") {
	}
	c.Send(`{"action":"send_message","requestId":"T3","sessionId":"` + sid + `","message":"three"}`)
	c.Expect("immediate_response")
	if _, end := c.Turn(); end["type"] != "eventual_response" {
		t.Fatalf("third turn: %v", end)
	}
	history := func(c *client) []string {
		c.Send(`{"action":"get_conversation_messages","requestId":"h","sessionId":"` + sid + `"}`)
		var out []string
		for _, m := range path(nextOf(c, "h"), "data", "messages").([]any) {
			msg := m.(map[string]any)
			line := msg["direction"].(string) + " " + path(msg, "content", "text").(string)
			if ended, ok := msg["ended"]; ok {
				line += " (" + ended.(string) + ")"
			}
			out = append(out, line)
		}
		return out
	}
	want := []string{"outbound Fine.", "inbound three", "outbound  (failed)", "inbound two", "outbound Hello, there (stopped)", "inbound one"}
	if got := history(c); !slices.Equal(got, want) {
		t.Errorf("history with %s:\n%s\nwant\n%s", server.ExtEndedTurns, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	want = []string{"outbound Fine.", "inbound three", "inbound two", "inbound one"}
	if got := history(plain); !slices.Equal(got, want) {
		t.Errorf("reference history:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// stepsModel says a few words and raises a card in one response, then
// answers with a heading.
type stepsModel struct{ calls atomic.Int32 }

func (m *stepsModel) Respond(ctx context.Context, req agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	if m.calls.Add(1) == 1 {
		onText("Let me ask you something first — ça va?")
		return agent.ModelResponse{Text: "Let me ask you something first — ça va?",
			ToolCalls: []store.ToolCall{{ID: "call-1", Name: "request_choices", Arguments: raiseChoices}}}, nil
	}
	onText("## Comparison\n\nPro has SSO.")
	return agent.ModelResponse{Text: "## Comparison\n\nPro has SSO."}, nil
}

// A history card says where in the reply it was shown (replyOffset, in
// UTF-16 code units), so the words said before it stay above it.
func TestHistoryPlacesCards(t *testing.T) {
	_, url := startServer(t, servertest.Config{Model: &stepsModel{}})
	c := dial(t, url)
	sid := create(c, `["choice_chips","`+server.ExtHistoryCards+`"]`)
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"compare"}`)
	var iid string
	for iid == "" {
		if ev := c.Next(); ev["type"] == "interaction_required" {
			iid = path(ev, "data", "data", "interactionId").(string)
		}
	}
	submitPlan(c, sid, iid)
	for ev := nextOf(c, "r-submit"); ; ev = c.Next() {
		if ev["type"] == "eventual_response" {
			break
		}
	}
	c.Send(`{"action":"get_conversation_messages","requestId":"h","sessionId":"` + sid + `"}`)
	msgs := path(nextOf(c, "h"), "data", "messages").([]any)
	reply := path(msgs[0].(map[string]any), "content", "text").(string)
	cards := msgs[1].(map[string]any)["interactions"].([]any)
	if len(cards) != 1 {
		t.Fatalf("cards %v", cards)
	}
	before := "Let me ask you something first — ça va?"
	if got, want := cards[0].(map[string]any)["replyOffset"], float64(len(utf16.Encode([]rune(before)))); got != want {
		t.Errorf("replyOffset %v, want %v: where %q ends in %q", got, want, before, reply)
	}
	if !strings.HasPrefix(reply, before+"\n\n## Comparison") {
		t.Errorf("reply %q", reply)
	}
}
