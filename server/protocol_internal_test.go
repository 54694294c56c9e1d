package server

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/uuid"
)

// benchSpec is the demo card's spec: what interaction_required carries on
// every cycle of kindload's load.
var benchSpec = json.RawMessage(`{"questions":[{"question":"Which plan are you curious about?","header":"Plan","options":[{"label":"Starter","description":"For one person"},` +
	`{"label":"Team","description":"Up to 20 seats"},{"label":"Enterprise"}]},{"question":"What should the answer cover?","header":"Topics",` +
	`"options":[{"label":"Pricing"},{"label":"Security"},{"label":"Integrations"}],"multiSelect":true}]}`)

// BenchmarkEncodeEvent encodes a cycle's card and its ack, as a
// connection does: into its batch's buffer.
func BenchmarkEncodeEvent(b *testing.B) {
	card := nested("interaction_required", "r-1", &interactionPayload{InteractionID: "6f1c2f4e-1d5b-4c1e-9f7a-0b7e2a9d4c11", Kind: "choices",
		Reason: "to tailor the answer to you", Spec: benchSpec})
	ack := immediate("r-1", 200, "Interaction submitted", &submitAck{SessionID: "s", InteractionID: "i", Kind: "choices",
		Values: json.RawMessage(`{"answers":[{"header":"Plan","options":["Team"]}]}`)})
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		for _, ev := range []*event{&card, &ack} {
			buf.Reset()
			if err := ev.writeTo(&buf); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// encode is ev's frame, as a connection queues it.
func encode(ev event) ([]byte, error) {
	var buf bytes.Buffer
	err := ev.writeTo(&buf)
	return buf.Bytes(), err
}

// A token's frame is written into the batch's buffer: once the buffer has
// grown, queueing tokens and writing the batch allocate nothing. (This is
// enqueueLocked less the wire gate's hook, which allocates, and the pool,
// which the race detector empties at random.)
func TestTokenFramesAllocateNothing(t *testing.T) {
	for _, token := range []string{"Pricing. ", "a", "Thanks — you ", `"quoted" <b>`} {
		var b batch
		ev := new(event) // as conn.encoding is
		fill := func() {
			for range 2 {
				*ev = tokenEvent("k1234-turn", token)
				if err := ev.writeTo(&b.buf); err != nil {
					t.Fatal(err)
				}
				b.ends = append(b.ends, b.buf.Len())
			}
		}
		if n := testing.AllocsPerRun(100, func() {
			fill()
			b.split()
			b.reset()
		}); n != 0 {
			t.Errorf("two frames of token %q made %v allocations, want none", token, n)
		}
		fill()
		for _, f := range b.split() {
			var ev struct{ Token, Type string }
			if err := json.Unmarshal(f, &ev); err != nil || ev.Token != token || ev.Type != "stream_token" {
				t.Errorf("tokenEvent(%q) = %s (%v)", token, f, err)
			}
		}
	}
}

// tokenJSON is what encoding/json writes for a stream_token.
func tokenJSON(ev event) []byte {
	data, _ := json.Marshal(event{Type: ev.Type, RequestID: ev.RequestID, Token: ev.Token, Timestamp: ev.Timestamp,
		Data: struct {
			RequestID string `json:"requestId"`
			Token     string `json:"token"`
		}{ev.RequestID, ev.Token}})
	return data
}

// canonicalID is a UUID's lower-case hyphenated form, anything else as it
// is, and an id in that form already costs no allocation.
func TestCanonicalID(t *testing.T) {
	const id = "6f1c2f4e-1d5b-4c1e-9f7a-0b7e2a9d4c11"
	for in, want := range map[string]string{
		id:                                       id,
		"6F1C2F4E-1D5B-4C1E-9F7A-0B7E2A9D4C11":   id,
		"6f1c2f4e1d5b4c1e9f7a0b7e2a9d4c11":       id,
		"{6f1c2f4e-1d5b-4c1e-9f7a-0b7e2a9d4c11}": id,
		"urn:uuid:6f1c2f4e-1d5b-4c1e-9f7a-0b7e2a9d4c11": id,
		"not-a-uuid": "not-a-uuid",
		"":           "",
	} {
		if got := canonicalID(in); got != want {
			t.Errorf("canonicalID(%q) = %q, want %q", in, got, want)
		}
		forms := idForms(in)
		if _, err := uuid.Parse(in); err != nil {
			if forms != nil {
				t.Errorf("idForms(%q) = %q, want none: it cannot be an id", in, forms)
			}
			continue
		}
		if got := forms[0]; got != want {
			t.Errorf("idForms(%q)[0] = %q, want %q", in, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { canonicalID(id) }); n != 0 {
		t.Errorf("canonicalID of a canonical id made %v allocations, want 0", n)
	}
}

// BenchmarkDecodeFrame reads a cycle's submit.
func BenchmarkDecodeFrame(b *testing.B) {
	submit := []byte(`{"action":"submit_interaction","requestId":"r-1","sessionId":"6f1c2f4e-1d5b-4c1e-9f7a-0b7e2a9d4c11",` +
		`"interactionId":"0b7e2a9d-4c11-4c1e-9f7a-6f1c2f4e1d5b","kind":"choices","values":{"answers":[{"header":"Plan","options":["Team"]},{"header":"Topics","options":["Pricing","Security"]}]}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := decodeFrame(submit); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEncodeAsV1: events are written byte for byte as encoding/json
// writes them: map keys sorted, HTML characters and U+2028 escaped, raw
// JSON compacted, nil slices null. Invalid UTF-8 is the one difference:
// json v2 writes U+FFFD itself where encoding/json escapes it, the same
// JSON string.
func TestEncodeAsV1(t *testing.T) {
	odd := "<b>&amp;</b> \u2028 \u2029"
	events := []event{
		nested("interaction_required", "r<1>", interactionPayload{InteractionID: "i", Kind: "choices", Reason: odd, Spec: json.RawMessage(" { \"a\" : [ 1 , 2 ] } ")}),
		immediate("r", 200, odd, object{"z": 1, "a": []string(nil), "m": map[string]any{}, "values": json.RawMessage(`{"b":1,"a":2}`)}),
		immediate("r", 200, "ok", nil),
		errorEvent("r", codeValidation, odd),
		toolCallChunk("r", "tool", `{"id":"<x>"}`),
		toolResultChunk("r", "tool", odd, true),
		cancelledEvent("r"),
		pongEvent("r"),
		eventualEvent("r", eventualPayload{MessageID: "m", Response: replyResponse{ResponseParts: []string{odd}}}),
		tokenEvent("r", odd),
	}
	for _, ev := range events {
		got, err := encode(ev)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(ev)
		if ev.token {
			want, err = tokenJSON(ev), nil
		}
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", ev.Type, got, want)
		}
	}
	bad := errorEvent("r", codeValidation, "bad \xff byte")
	got, err := encode(bad)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(bad)
	var g, w any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil || !reflect.DeepEqual(g, w) {
		t.Errorf("invalid UTF-8:\n got %s\nwant %s", got, want)
	}
}

// TestPayloadsAsMaps: the typed acks are written as the maps they replace
// were, byte for byte.
func TestPayloadsAsMaps(t *testing.T) {
	values := json.RawMessage(`{"answers":[{"header":"Plan","options":["Team"]}]}`)
	for name, tc := range map[string]struct {
		typed any
		was   object
	}{
		"session": {sessionPayload{AgentID: "a", AgentName: "kindkit", AgentParticipantID: "ap", ConversationID: "c", SessionID: "s", UserParticipantID: "up"},
			object{"sessionId": "s", "conversationId": "c", "agentName": "kindkit", "userParticipantId": "up", "agentParticipantId": "ap", "agentId": "a"}},
		"session without agent": {sessionPayload{AgentName: "", AgentParticipantID: "ap", ConversationID: "c", SessionID: "s", UserParticipantID: "up"},
			object{"sessionId": "s", "conversationId": "c", "agentName": "", "userParticipantId": "up", "agentParticipantId": "ap"}},
		"submitted": {submitAck{InteractionID: "i", Kind: "choices", SessionID: "s", Values: values},
			object{"sessionId": "s", "interactionId": "i", "kind": "choices", "values": values}},
		"declined": {submitAck{Declined: true, InteractionID: "i", SessionID: "s"},
			object{"sessionId": "s", "interactionId": "i", "declined": true}},
	} {
		typed := immediate("r", 200, "ok", tc.typed)
		got, err := encode(typed)
		if err != nil {
			t.Fatal(err)
		}
		was := immediate("r", 200, "ok", tc.was)
		was.Timestamp = typed.Timestamp
		want, err := encode(was)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}
