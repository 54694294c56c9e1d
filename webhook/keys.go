package webhook

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
)

// The prefixes of Standard Webhooks' serialized keys.
const (
	secretPrefix     = "whsec_" // an HMAC-SHA256 secret: signs v1
	signingKeyPrefix = "whsk_"  // an Ed25519 private key: signs v1a
	publicKeyPrefix  = "whpk_"  // an Ed25519 public key: verifies v1a
)

// HMAC secrets are between 24 and 64 bytes (the spec's bounds).
const (
	minSecret = 24
	maxSecret = 64
)

// A Key signs events: an HMAC-SHA256 secret (whsec_, signature v1) or an
// Ed25519 private key (whsk_, signature v1a). Printed or logged, it shows
// only its kind.
type Key struct {
	secret []byte             // v1
	signer ed25519.PrivateKey // v1a
}

// ParseKey reads one key in Standard Webhooks' form: whsec_ and the
// base64 of a 24-to-64-byte secret, or whsk_ and the base64 of an Ed25519
// private key (its 32-byte seed, or the 64 bytes of seed and public key).
// Its errors never hold the key.
func ParseKey(s string) (Key, error) {
	var (
		raw   string
		isKey bool
	)
	switch {
	case strings.HasPrefix(s, secretPrefix):
		raw = s[len(secretPrefix):]
	case strings.HasPrefix(s, signingKeyPrefix):
		raw, isKey = s[len(signingKeyPrefix):], true
	case strings.HasPrefix(s, publicKeyPrefix):
		return Key{}, errors.New("a whpk_ public key verifies signatures; sign with its private key, whsk_")
	default:
		return Key{}, errors.New("want whsec_<base64> (an HMAC secret) or whsk_<base64> (an Ed25519 private key)")
	}
	b, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return Key{}, fmt.Errorf("%s…: not standard base64", map[bool]string{false: secretPrefix, true: signingKeyPrefix}[isKey])
	}
	if !isKey {
		if len(b) < minSecret || len(b) > maxSecret {
			return Key{}, fmt.Errorf("whsec_…: a secret of %d bytes; want %d to %d", len(b), minSecret, maxSecret)
		}
		return Key{secret: b}, nil
	}
	switch len(b) {
	case ed25519.SeedSize:
		return Key{signer: ed25519.NewKeyFromSeed(b)}, nil
	case ed25519.PrivateKeySize:
		k := ed25519.NewKeyFromSeed(b[:ed25519.SeedSize])
		if !hmac.Equal(k, b) {
			return Key{}, errors.New("whsk_…: its last 32 bytes are not the public key of its seed")
		}
		return Key{signer: k}, nil
	}
	return Key{}, fmt.Errorf("whsk_…: %d bytes; want an Ed25519 seed (%d) or private key (%d)", len(b), ed25519.SeedSize, ed25519.PrivateKeySize)
}

// ParseKeys reads the keys of s, separated by white space: every key
// signs every event, so a receiver that knows any one of them verifies it
// (several at once rotate a secret without a gap). At least one.
func ParseKeys(s string) ([]Key, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil, errors.New("no key: want whsec_<base64> or whsk_<base64>, several separated by spaces")
	}
	keys := make([]Key, 0, len(fields))
	for i, f := range fields {
		k, err := ParseKey(f)
		if err != nil {
			return nil, fmt.Errorf("key %d of %d: %w", i+1, len(fields), err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// PublicKey is an Ed25519 key's public key as Standard Webhooks writes it
// (whpk_<base64>), for receivers to verify v1a with; "" for an HMAC
// secret, which has none.
func (k Key) PublicKey() string {
	if k.signer == nil {
		return ""
	}
	return publicKeyPrefix + base64.StdEncoding.EncodeToString(k.signer.Public().(ed25519.PublicKey))
}

// String shows the key's kind, never the key.
func (k Key) String() string {
	if k.signer != nil {
		return "whsk_[redacted]"
	}
	return "whsec_[redacted]"
}

// LogValue keeps the key out of a log line.
func (k Key) LogValue() slog.Value { return slog.StringValue(k.String()) }

// sign is k's signature of content, as the webhook-signature header lists
// it: v1,<base64> or v1a,<base64>.
func (k Key) sign(content []byte) string {
	if k.signer != nil {
		return "v1a," + base64.StdEncoding.EncodeToString(ed25519.Sign(k.signer, content))
	}
	h := hmac.New(sha256.New, k.secret)
	h.Write(content)
	return "v1," + base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// signature is the webhook-signature header of an event with id, sent at
// timestamp (unix seconds) with body: every key's signature of
// id.timestamp.body, separated by spaces.
func signature(keys []Key, id, timestamp string, body []byte) string {
	content := make([]byte, 0, len(id)+len(timestamp)+len(body)+2)
	content = append(append(append(append(append(content, id...), '.'), timestamp...), '.'), body...)
	sigs := make([]string, len(keys))
	for i, k := range keys {
		sigs[i] = k.sign(content)
	}
	return strings.Join(sigs, " ")
}
