package server

import (
	"strings"

	"github.com/google/uuid"

	"github.com/kindkit/kindkit/store"
)

// newID is the key of a new conversation or session: store.NewID, a
// canonical lower-case UUIDv7, as the reference schemas require of their
// ids (format: uuid). Its 74 random bits come from crypto/rand: without
// auth, a conversation id is the bearer secret of its conversation.
func newID() string { return store.NewID() }

// idForms are the stored ids a client's id may name, in the order to try
// them: a UUID in any case or hyphenation is its canonical form, then its
// 32 hex digits (the form of conversation ids stored before they were
// UUIDs). Anything else names nothing: it is answered as an unknown id
// before any store sees it, so every store answers it alike (PostgreSQL
// cannot even compare a NUL).
func idForms(id string) []string {
	canonical, ok := storedID(id)
	if !ok {
		return nil
	}
	return []string{canonical, strings.ReplaceAll(canonical, "-", "")}
}

// storedID is the form in which id may be stored, when it is a UUID in
// any case or hyphenation: session and message ids have always been
// UUIDs. ok is false for anything else, which names nothing.
func storedID(id string) (canonical string, ok bool) {
	if _, err := uuid.Parse(id); err != nil {
		return "", false
	}
	return canonicalID(id), true
}

// canonicalID is the first of idForms(id): id itself when it is canonical
// already, as the ids this server hands out are, at no allocation.
func canonicalID(id string) string {
	u, err := uuid.Parse(id)
	switch {
	case err != nil:
		return id
	case len(id) == 36 && !strings.ContainsAny(id, "ABCDEF"):
		return id // hyphenated as Parse checked, and lower-case
	}
	return u.String()
}
