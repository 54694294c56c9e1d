package server

import (
	"crypto/rand"
	"encoding/hex"
)

// newConversationID returns 128 random bits: without auth, a conversation id
// is the bearer secret of its conversation.
func newConversationID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
