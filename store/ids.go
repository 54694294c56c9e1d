package store

import (
	"crypto/rand"

	"github.com/google/uuid"
)

// NewID is the key of a new conversation, session, message or park: a
// canonical lower-case UUIDv7, which sorts by the millisecond it was made.
// The stores index these ids; a random (v4) key put every new row on a
// random page of each such index, a time-ordered one puts it on the last
// few, which a million rows' index keeps in cache.
//
// Ids made before are UUIDv4 and stay valid: nothing may parse a version
// out of an id or order by it. The millisecond is its creation time, seen
// by whoever holds the id.
//
// uuid.NewV7 spends the 12 bits after the version on a sub-millisecond
// clock, leaving 62 random bits. A conversation id is the bearer secret of
// its conversation when there is no auth, so those 12 bits are random
// again: 74 bits from crypto/rand, against the 64 that are the usual floor
// for a session secret. Ids made in the same millisecond are then in no
// particular order, which costs nothing: they land on the same last page.
//
// It panics when crypto/rand fails, as uuid.NewString does: since Go 1.24
// crypto/rand.Read never returns an error (the runtime aborts instead), so
// an error here is unreachable, and no caller could store a row without a
// key anyway.
func NewID() string {
	u := uuid.Must(uuid.NewV7())
	var b [2]byte
	rand.Read(b[:])
	u[6] = 0x70 | b[0]&0x0f // version 7, then rand_a's 12 bits
	u[7] = b[1]
	return u.String()
}
