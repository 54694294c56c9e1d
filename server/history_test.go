package server_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/server"
)

// The history carries each ended card of a turn on the user message that
// started it (a kindkit extension): its kind, its canonical spec, its
// reason and its outcome, the payload the turn resumed with. A raise the
// kind refused is not a card; a withdrawn card is listed as withdrawn; the
// messages themselves are as the reference sends them, page by page.
func TestHistoryCarriesCards(t *testing.T) {
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
	_, url := startServer(t, server.Config{Model: script})
	c := dial(t, url)
	sid := create(c, `["choice_chips","rating_scale"]`)
	shown := map[string]map[string]any{} // request id → the spec its card showed
	raise := func(rid, msg string) string {
		c.Send(`{"action":"send_message","requestId":"` + rid + `","sessionId":"` + sid + `","message":"` + msg + `"}`)
		for {
			ev := c.Next()
			if ev["type"] == "interaction_required" {
				c.Expect("stream_chunk") // the raise's call, after its card
				shown[rid] = path(ev, "data", "data", "spec").(map[string]any)
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

	type card struct {
		Kind    string         `json:"kind"`
		Spec    map[string]any `json:"spec"`
		Reason  string         `json:"reason"`
		Outcome map[string]any `json:"outcome"`
	}
	type message struct {
		Direction    string         `json:"direction"`
		Content      map[string]any `json:"content"`
		Interactions []card         `json:"interactions"`
		keys         []string
	}
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
	want := []message{
		{Direction: "outbound", Content: map[string]any{"text": "Noted."}},
		{Direction: "inbound", Content: map[string]any{"text": "Basic, please"}},
		{Direction: "inbound", Content: map[string]any{"text": "check"}, Interactions: []card{{Kind: "choices", Reason: "to check",
			Spec:    shown["T3"],
			Outcome: map[string]any{"status": "withdrawn", "message": "The person wrote a new message instead of answering; this request was withdrawn."}}}},
		{Direction: "outbound", Content: map[string]any{"text": "No worries."}},
		{Direction: "inbound", Content: map[string]any{"text": "rate"}, Interactions: []card{{Kind: "rating", Reason: "to help you better",
			Spec:    shown["T2"],
			Outcome: map[string]any{"status": "declined", "message": "The visitor declined. Continue helping them without this and do not ask again this conversation."}}}},
		{Direction: "outbound", Content: map[string]any{"text": "Team it is."}},
		{Direction: "inbound", Content: map[string]any{"text": "quote me"}, Interactions: []card{{Kind: "choices", Reason: "to quote", Spec: shown["T1"],
			Outcome: map[string]any{"status": "submitted", "values": map[string]any{"answers": []any{
				map[string]any{"header": "Plan", "options": []any{"Team"}},
				map[string]any{"header": "Topics", "options": []any{"Pricing"}, "other": "SSO"}}}}}}},
	}
	// Whole, then three at a time: a turn's cards are found when its user
	// message is on a later page than its reply.
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
