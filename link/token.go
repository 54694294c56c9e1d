package link

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/kindkit/kindkit/store"
)

// MinSecret is the shortest secret a Signer takes, in bytes.
const MinSecret = 32

// tokenVersion is a token's first byte; a token of another version is
// malformed.
const tokenVersion = 1

// payloadLen is a token's signed part: its version, the conversation's
// and the ask's ids (UUIDs, 16 bytes each) and its expiry (Unix seconds).
const payloadLen = 1 + 16 + 16 + 8

// domain separates a link's MAC from anything else the secret might sign.
const domain = "kindkit answer link v1\x00"

// Errors of Signer.Parse, each a distinct 4xx for Handler.
var (
	// ErrMalformed: not a token at all (truncated, not base64, another
	// version).
	ErrMalformed = errors.New("link: malformed token")
	// ErrForged: well formed, but no secret of this server signed it
	// (tampered with, or another server's).
	ErrForged = errors.New("link: token not signed by this server")
	// ErrExpired: signed here, but past its expiry.
	ErrExpired = errors.New("link: link expired")
)

// Claims are what a token names: one ask, until when.
type Claims struct {
	ConversationID string
	AskID          string // the interactionId
	Expires        time.Time
}

// Signer makes and checks tokens with its secrets: the first signs, any
// verifies (for rotation).
type Signer struct {
	secrets [][]byte
}

// NewSigner returns a signer with secrets, each at least MinSecret bytes.
func NewSigner(secrets ...[]byte) (*Signer, error) {
	if len(secrets) == 0 {
		return nil, errors.New("link: no secret")
	}
	s := &Signer{}
	for i, sec := range secrets {
		if len(sec) < MinSecret {
			return nil, fmt.Errorf("link: secret %d is %d bytes, want at least %d", i+1, len(sec), MinSecret)
		}
		s.secrets = append(s.secrets, append([]byte(nil), sec...))
	}
	return s, nil
}

// ParseSecrets is NewSigner of the secrets in s, separated by spaces (as
// KINDKIT_LINK_SECRET gives them: the one that signs first).
func ParseSecrets(s string) (*Signer, error) {
	var secrets [][]byte
	for _, f := range strings.Fields(s) {
		secrets = append(secrets, []byte(f))
	}
	return NewSigner(secrets...)
}

// Mint is c's token. Ids that are not UUIDs (the engine's always are)
// make no token: "".
func (s *Signer) Mint(c Claims) string {
	conv, err1 := uuid.Parse(c.ConversationID)
	ask, err2 := uuid.Parse(c.AskID)
	if err1 != nil || err2 != nil {
		return ""
	}
	p := make([]byte, 0, payloadLen)
	p = append(p, tokenVersion)
	p = append(p, conv[:]...)
	p = append(p, ask[:]...)
	p = binary.BigEndian.AppendUint64(p, uint64(c.Expires.Unix()))
	enc := base64.RawURLEncoding
	return enc.EncodeToString(p) + "." + enc.EncodeToString(mac(s.secrets[0], p))
}

// Parse checks token at now and returns its claims: ErrMalformed,
// ErrForged or ErrExpired when it does not hold. The signature is checked
// before the expiry, so an expired link says so only when it is genuine.
func (s *Signer) Parse(token string, now time.Time) (Claims, error) {
	enc := base64.RawURLEncoding
	p64, m64, ok := strings.Cut(token, ".")
	if !ok || len(p64) != enc.EncodedLen(payloadLen) || len(m64) != enc.EncodedLen(sha256.Size) {
		return Claims{}, ErrMalformed
	}
	p, err := enc.Strict().DecodeString(p64)
	if err != nil || len(p) != payloadLen || p[0] != tokenVersion {
		return Claims{}, ErrMalformed
	}
	m, err := enc.Strict().DecodeString(m64)
	if err != nil || len(m) != sha256.Size {
		return Claims{}, ErrMalformed
	}
	signed := false
	for _, sec := range s.secrets {
		if hmac.Equal(m, mac(sec, p)) {
			signed = true
		}
	}
	if !signed {
		return Claims{}, ErrForged
	}
	conv, _ := uuid.FromBytes(p[1:17])
	ask, _ := uuid.FromBytes(p[17:33])
	exp := int64(binary.BigEndian.Uint64(p[33:]))
	c := Claims{ConversationID: conv.String(), AskID: ask.String(), Expires: time.Unix(exp, 0).UTC()}
	if !now.Before(c.Expires) {
		return c, ErrExpired
	}
	return c, nil
}

func mac(secret, payload []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(domain))
	h.Write(payload)
	return h.Sum(nil)
}

// DefaultTTL is how long a link to an ask without a deadline lives, from
// when the ask parked.
const DefaultTTL = 72 * time.Hour

// Expiry is when the link to an ask that parked at parked lives until:
// its deadline when it has one (the ask ends then anyway), else parked
// plus ttl (DefaultTTL when ttl is not positive).
func Expiry(parked, deadline time.Time, ttl time.Duration) time.Time {
	if !deadline.IsZero() {
		return deadline
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return parked.Add(ttl)
}

// URL is the answer page's address for token under base, the server's
// public URL (scheme, host and any path prefix): base/answer#token.
func URL(base, token string) string {
	return strings.TrimRight(base, "/") + "/answer#" + token
}

// AnswerURL is a webhook sender's maker of answer links (webhook.Config's
// AnswerURL): the link to an ask.parked event's ask under base, expiring
// as Expiry says with ttl. It reads only the event, so the same event
// gets the same link on every attempt.
func (s *Signer) AnswerURL(base string, ttl time.Duration) func(*store.OutboxEvent) string {
	return func(e *store.OutboxEvent) string {
		token := s.Mint(Claims{ConversationID: e.ConversationID, AskID: e.AskID, Expires: Expiry(e.At, e.Deadline, ttl)})
		if token == "" {
			return ""
		}
		return URL(base, token)
	}
}
