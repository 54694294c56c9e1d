package server

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/store/memstore"
)

// FuzzFrames hands arbitrary frames to the decoder and the action handlers
// of a connection: every frame gets well-formed JSON events back, and
// nothing panics.
func FuzzFrames(f *testing.F) {
	for _, seed := range []string{
		`{"action":"ping","requestId":"p"}`,
		`{"action":"create_conversation_session","requestId":"r","agentId":"a","supports":["choice_chips"]}`,
		`{"action":"create_conversation_session","requestId":"r","agentId":"a","supports":null,"conversationId":"x"}`,
		`{"action":"send_message","requestId":"r","sessionId":"s","message":"hi"}`,
		`{"action":"submit_interaction","requestId":"r","sessionId":"s","interactionId":"i","kind":"choices","values":null}`,
		`{"action":"submit_interaction","requestId":"r","sessionId":"s","declined":true}`,
		`{"action":"get_conversation_messages","sessionId":"s","limit":-4,"cursor":"c"}`,
		`{"action":"confirm_tool_action","sessionId":"s","approved":false}`,
		`{"action":"cancel"}`,
		`{"action":5}`, `[]`, `null`, `{"supports":[1]}`, "\xff",
	} {
		f.Add([]byte(seed))
	}
	catalog, err := kinds.All()
	if err != nil {
		f.Fatal(err)
	}
	script, _ := agent.NewScripted([]agent.ScriptEntry{{Kind: "toolCall", Name: "request_choices", Arguments: `{"questions":[{"question":"Q","header":"H","options":["a","b"]}]}`}, {Kind: "text", Text: "ok"}})
	eng, err := agent.NewEngine(agent.Config{Catalog: catalog, Store: memstore.New(), Model: script})
	if err != nil {
		f.Fatal(err)
	}
	defer eng.Close()
	srv := New(eng, Options{})
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &conn{srv: srv, wake: make(chan struct{}, 1)}
		c.dispatch(context.Background(), data)
		if t, ok := c.followed(); ok {
			srv.engine.Cancel(context.Background(), t.conv, t.requestID)
		}
		srv.engine.Wait()
		c.unwatchAll()
		c.mu.Lock()
		queue := queued(c)
		c.mu.Unlock()
		for _, frame := range queue {
			var ev map[string]any
			if err := json.Unmarshal(frame, &ev); err != nil || ev["type"] == nil || ev["timestamp"] == nil {
				t.Fatalf("bad event %s for frame %q", frame, data)
			}
		}
	})
}

// FuzzTokenEncoding: the hand-written token encoder writes what
// encoding/json writes.
func FuzzTokenEncoding(f *testing.F) {
	for _, s := range []string{"", "Hello fr", "Pro it is — pulling", "<a href=\"x\">&</a>", "\x00\x1f\t\n\r\\", "\u2028\u2029", "\xff\xfe bad utf8", "é😀"} {
		f.Add(s, "r-msg")
	}
	f.Fuzz(func(t *testing.T, token, requestID string) {
		raw, _ := encode(tokenEvent(requestID, token))
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("invalid JSON %q: %v", raw, err)
		}
		want, _ := json.Marshal(token)
		if string(appendString(nil, token)) != string(want) {
			t.Fatalf("appendString(%q) = %s, encoding/json writes %s", token, appendString(nil, token), want)
		}
		ts := int64(got["timestamp"].(float64))
		ref, _ := json.Marshal(event{Type: "stream_token", RequestID: requestID, Token: token, Timestamp: ts,
			Data: struct {
				RequestID string `json:"requestId"`
				Token     string `json:"token"`
			}{requestID, token}})
		if string(ref) != string(raw) && requestID != "" && token != "" { // empty ones are never sent
			t.Fatalf("token event\n%s\nencoding/json writes\n%s", raw, ref)
		}
	})
}

// FuzzDecodeFrame: decodeFrame (json v2 with v1's options) reads exactly
// the frames encoding/json reads, to the same frame, and refuses the same.
func FuzzDecodeFrame(f *testing.F) {
	for _, seed := range []string{
		`{"action":"submit_interaction","requestId":"r","sessionId":"s","interactionId":"i","kind":"choices","values":{"a":[1,2.5e3,"\u00e9"]}}`,
		`{"Action":"ping","REQUESTID":"p","requestId":"q"}`, `{"action":"a","action":"b"}`, `{"supports":["x",null]}`, `{"supports":"x"}`,
		`{"approved":"yes"}`, `{"limit":1.5}`, `{"limit":1e400}`, `{"code":123}`, `{"message":"\ud800"}`, "{\"message\":\"\xff\"}", `{} x`, `{"a":1}{}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, gotSupports, err := decodeFrame(data)
		var want frame
		wantErr := json.Unmarshal(data, &want)
		var wantSupports []string
		if wantErr == nil && len(want.Supports) > 0 && string(want.Supports) != "null" {
			if wantErr = json.Unmarshal(want.Supports, &wantSupports); wantErr == nil && wantSupports == nil {
				wantSupports = []string{}
			}
		}
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("decodeFrame(%q): error %v; encoding/json: %v", data, err, wantErr)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(*got, want) || !reflect.DeepEqual(gotSupports, wantSupports) {
			t.Fatalf("decodeFrame(%q) = %+v %q; encoding/json reads %+v %q", data, *got, gotSupports, want, wantSupports)
		}
	})
}
