package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Principal is who a connection acts for, resolved once from the ?token=
// query parameter at connect.
type Principal struct {
	Sub    string
	Org    string
	Email  string
	Role   string
	Groups []string
}

// claims are the HS256 token claims kindkit reads.
type claims struct {
	Sub    string   `json:"sub"`
	Org    string   `json:"org"`
	Email  string   `json:"email"`
	Role   string   `json:"role"`
	Groups []string `json:"groups"`
	Exp    *float64 `json:"exp"`
}

// VerifyToken checks an HS256 JWT signed with secret and returns its
// principal. Any other algorithm, a bad signature, an expired token or a
// token without sub is an error.
func VerifyToken(token string, secret []byte, now time.Time) (Principal, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return Principal{}, errors.New("token: want three dot-separated parts")
	}
	var header struct {
		Alg string `json:"alg"`
	}
	if err := decodeSegment(parts[0], &header); err != nil {
		return Principal{}, errors.New("token: bad header")
	}
	if header.Alg != "HS256" {
		return Principal{}, errors.New("token: alg must be HS256")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return Principal{}, errors.New("token: bad signature encoding")
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return Principal{}, errors.New("token: bad signature")
	}
	var c claims
	if err := decodeSegment(parts[1], &c); err != nil {
		return Principal{}, errors.New("token: bad claims")
	}
	if c.Exp != nil && float64(now.Unix()) >= *c.Exp {
		return Principal{}, errors.New("token: expired")
	}
	if c.Sub == "" {
		return Principal{}, errors.New("token: no sub")
	}
	return Principal{Sub: c.Sub, Org: c.Org, Email: c.Email, Role: c.Role, Groups: c.Groups}, nil
}

func decodeSegment(seg string, v any) error {
	data, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(seg, "="))
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// SignToken makes an HS256 token for claims; tests and tools use it.
func SignToken(secret []byte, p Principal, exp time.Time) string {
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	body, _ := json.Marshal(claims{Sub: p.Sub, Org: p.Org, Email: p.Email, Role: p.Role, Groups: p.Groups, Exp: ptr(float64(exp.Unix()))})
	payload := base64.RawURLEncoding.EncodeToString(body)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(header + "." + payload))
	return header + "." + payload + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func ptr[T any](v T) *T { return &v }
