package elicit

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A request state is sealed: the client can neither read it nor change
// it, nor carry it to another tool, nor use it past its deadline; and a
// server with another key refuses it. Each refusal says which.
func TestSealedState(t *testing.T) {
	key := make([]byte, 32)
	sl, err := newSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	st := state{Tool: "quote", Expires: now.Add(time.Hour).Unix(), Attempts: map[string]int{"rating": 2},
		Answers: map[string]*mcp.ElicitResult{"identity_intake": {Action: "accept", Content: map[string]any{"email": "ann@example.com"}}}}
	sealed, err := sl.seal(st)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, "ann@example.com") || strings.Contains(sealed, "attempts") {
		t.Errorf("the sealed state %q shows what it holds", sealed)
	}
	got, err := sl.open(sealed, "quote", now)
	if err != nil || got.Attempts["rating"] != 2 || got.Answers["identity_intake"].Content["email"] != "ann@example.com" {
		t.Fatalf("open = %+v, %v", got, err)
	}

	flipped := []byte(sealed)
	flipped[len(flipped)-5] ^= 1
	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(sealed, stateVersion))
	forged := stateVersion + base64.RawURLEncoding.EncodeToString(append(raw[:12:12], []byte(`{"tool":"quote","attempts":{}}`)...))
	other, _ := newSealer(append(make([]byte, 31), 1))
	elsewhere, _ := other.seal(st)
	for _, tc := range []struct {
		name, text, tool string
		at               time.Time
		want             error
	}{
		{"a changed byte", string(flipped), "quote", now, ErrStateTampered},
		{"a forged state", forged, "quote", now, ErrStateTampered},
		{"plain JSON, as states were", `{"attempts":{}}`, "quote", now, ErrStateTampered},
		{"another server's key", elsewhere, "quote", now, ErrStateTampered},
		{"not base64", stateVersion + "%%%", "quote", now, ErrStateTampered},
		{"too short", stateVersion + "AAAA", "quote", now, ErrStateTampered},
		{"another tool's", sealed, "delete_everything", now, ErrStateForeign},
		{"past its deadline", sealed, "quote", now.Add(time.Hour), ErrStateExpired},
	} {
		if _, err := sl.open(tc.text, tc.tool, tc.at); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := newSealer(make([]byte, 16)); err == nil {
		t.Error("a 16-byte key was taken; want 32")
	}
}

// FuzzOpenState: whatever a client sends as the request state, opening it
// never panics, and what it reads is a live state of the tool. (That only
// states sealed here are read is AES-GCM's part: TestSealedState.)
func FuzzOpenState(f *testing.F) {
	sl, err := newSealer(make([]byte, 32))
	if err != nil {
		f.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	sealed, _ := sl.seal(state{Tool: "quote", Expires: now.Add(time.Hour).Unix()})
	for _, s := range []string{sealed, "", stateVersion, stateVersion + "AAAA", `{"attempts":{"a":-1}}`, "k1.////", sealed[:len(sealed)-1]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		st, err := sl.open(text, "quote", now)
		if err == nil && (st.Tool != "quote" || st.Expires <= now.Unix()) {
			t.Errorf("%q read as %+v: not a live state of the tool", text, st)
		}
	})
}
