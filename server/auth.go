package server

import (
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Principal is who a connection acts for, resolved from the ?token= query
// parameter at connect. Expires is the token's exp: after it the
// connection acts anonymously.
type Principal struct {
	Sub     string
	Org     string
	Email   string
	Role    string
	Groups  []string
	Expires time.Time
}

// TokenRules are what a token must carry beyond a good HS256 signature,
// an exp in the future and a sub.
type TokenRules struct {
	Audience string // when set, aud must name it
	Issuer   string // when set, iss must be it
}

// tokenLeeway is the clock skew allowed on exp and nbf.
const tokenLeeway = 30 * time.Second

// claims are the token claims kindkit reads.
type claims struct {
	jwt.RegisteredClaims
	Org    string   `json:"org,omitempty"`
	Email  string   `json:"email,omitempty"`
	Role   string   `json:"role,omitempty"`
	Groups []string `json:"groups,omitempty"`
}

// VerifyToken checks an HS256 JWT signed with secret, at now, with
// github.com/golang-jwt/jwt/v5, and returns its principal. Any other
// algorithm, a bad signature, a missing or passed exp, an nbf still to
// come, a token without sub, or one that breaks rules is an error.
func VerifyToken(token string, secret []byte, now time.Time, rules TokenRules) (Principal, error) {
	opts := []jwt.ParserOption{jwt.WithValidMethods([]string{"HS256"}), jwt.WithExpirationRequired(),
		jwt.WithLeeway(tokenLeeway), jwt.WithTimeFunc(func() time.Time { return now })}
	if rules.Audience != "" {
		opts = append(opts, jwt.WithAudience(rules.Audience))
	}
	if rules.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(rules.Issuer))
	}
	var c claims
	if _, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return secret, nil }, opts...); err != nil {
		return Principal{}, fmt.Errorf("token: %w", err)
	}
	if c.Subject == "" {
		return Principal{}, errors.New("token: no sub")
	}
	return Principal{Sub: c.Subject, Org: c.Org, Email: c.Email, Role: c.Role, Groups: c.Groups, Expires: c.ExpiresAt.Time}, nil
}

// SignToken makes an HS256 token for p that expires at exp; tests and
// tools use it.
func SignToken(secret []byte, p Principal, exp time.Time) string {
	c := claims{RegisteredClaims: jwt.RegisteredClaims{Subject: p.Sub, ExpiresAt: jwt.NewNumericDate(exp)},
		Org: p.Org, Email: p.Email, Role: p.Role, Groups: p.Groups}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(secret)
	if err != nil {
		panic("server: sign token: " + err.Error()) // only with an unusable key
	}
	return s
}
