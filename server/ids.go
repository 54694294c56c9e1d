package server

import (
	"strings"

	"github.com/google/uuid"
)

// newID is a canonical lower-case UUIDv4, as the reference schemas require
// of conversation and session ids (format: uuid). Its 122 random bits come
// from crypto/rand: without auth, a conversation id is the bearer secret of
// its conversation.
func newID() string { return uuid.NewString() }

// idForms are the stored ids a client's id may name, in the order to try
// them: a UUID in any case or hyphenation is its canonical form, then its
// 32 hex digits (the form of conversation ids stored before they were
// UUIDs); anything else is only itself.
func idForms(id string) []string {
	u, err := uuid.Parse(id)
	if err != nil {
		return []string{id}
	}
	canonical := u.String()
	return []string{canonical, strings.ReplaceAll(canonical, "-", "")}
}
