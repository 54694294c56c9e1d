package link_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kindkit/kindkit/link"
)

var (
	secretA = []byte("link-secret-A-0123456789abcdefghijkl")
	secretB = []byte("link-secret-B-0123456789abcdefghijkl")
)

func signer(t testing.TB, secrets ...[]byte) *link.Signer {
	t.Helper()
	s, err := link.NewSigner(secrets...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A token says what it was minted with, and only to a signer that holds
// its secret; a changed byte, another server's secret or a passed expiry
// each get their own error.
func TestToken(t *testing.T) {
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	c := link.Claims{ConversationID: uuid.NewString(), AskID: uuid.NewString(), Expires: now.Add(time.Hour)}
	a := signer(t, secretA)
	tok := a.Mint(c)
	got, err := a.Parse(tok, now)
	if err != nil || got != c {
		t.Fatalf("Parse(Mint(%+v)) = %+v, %v", c, got, err)
	}
	// Rotation: a signer that signs with B and still knows A reads it.
	if got, err := signer(t, secretB, secretA).Parse(tok, now); err != nil || got != c {
		t.Errorf("after rotation: %+v, %v", got, err)
	}
	if _, err := signer(t, secretB).Parse(tok, now); !errors.Is(err, link.ErrForged) {
		t.Errorf("another server's token: %v, want ErrForged", err)
	}
	if _, err := a.Parse(tok, c.Expires); !errors.Is(err, link.ErrExpired) {
		t.Errorf("at its expiry: %v, want ErrExpired", err)
	}
	// Every single character changed is refused: malformed or forged,
	// never taken.
	alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for i := range tok {
		if tok[i] == '.' {
			continue
		}
		r := alphabet[(strings.IndexByte(alphabet, tok[i])+1)%len(alphabet)]
		bad := tok[:i] + string(r) + tok[i+1:]
		if _, err := a.Parse(bad, now); !errors.Is(err, link.ErrForged) && !errors.Is(err, link.ErrMalformed) {
			t.Fatalf("token with character %d changed: %v, want refused", i, err)
		}
	}
	for _, bad := range []string{"", ".", tok + "A", tok[:len(tok)-1], strings.Replace(tok, ".", "", 1), tok + "." + tok} {
		if _, err := a.Parse(bad, now); !errors.Is(err, link.ErrMalformed) {
			t.Errorf("Parse(%q) = %v, want ErrMalformed", bad, err)
		}
	}
	if _, err := link.NewSigner([]byte("short")); err == nil {
		t.Error("a 5-byte secret was taken")
	}
	if _, err := link.ParseSecrets("  "); err == nil {
		t.Error("no secret was taken")
	}
	if got := a.Mint(link.Claims{ConversationID: "not-a-uuid", AskID: c.AskID, Expires: c.Expires}); got != "" {
		t.Errorf("Mint of a non-UUID id = %q, want none", got)
	}
}

// A link expires with its ask's deadline, or a fixed time after it parked.
func TestExpiry(t *testing.T) {
	parked := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	if got := link.Expiry(parked, parked.Add(time.Hour), 0); !got.Equal(parked.Add(time.Hour)) {
		t.Errorf("with a deadline: %v", got)
	}
	if got := link.Expiry(parked, time.Time{}, 0); !got.Equal(parked.Add(link.DefaultTTL)) {
		t.Errorf("without: %v", got)
	}
	if got := link.URL("https://x.example/p/", "tok"); got != "https://x.example/p/answer#tok" {
		t.Errorf("URL = %s", got)
	}
}

// FuzzParse: no input makes Parse panic, and what it takes is exactly
// what Mint makes of its claims.
func FuzzParse(f *testing.F) {
	s := signer(f, secretA)
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	tok := s.Mint(link.Claims{ConversationID: uuid.NewString(), AskID: uuid.NewString(), Expires: now.Add(time.Hour)})
	f.Add(tok)
	f.Add(tok[:40])
	f.Add("")
	f.Add("a.b")
	f.Add(strings.Repeat("A", 55) + "." + strings.Repeat("A", 43))
	f.Fuzz(func(t *testing.T, token string) {
		c, err := s.Parse(token, now)
		if err != nil {
			return
		}
		if s.Mint(c) != token {
			t.Fatalf("Parse took %q, which Mint makes %q", token, s.Mint(c))
		}
	})
}
