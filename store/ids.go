package store

import (
	"crypto/rand"
	"time"

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
// here: 74 bits from crypto/rand, against the 64 that are the usual floor
// for a session secret. Ids made in the same millisecond are then in no
// particular order, which costs nothing: they land on the same last page.
// With nothing of uuid.NewV7's clock left to keep, the id is made here, on
// the stack (NewV7's reader made its bytes escape: one allocation an id,
// nine a cycle); the string is its one allocation.
//
// It panics when crypto/rand fails, as uuid.NewString does: since Go 1.24
// crypto/rand.Read never returns an error (the runtime aborts instead), so
// an error here is unreachable, and no caller could store a row without a
// key anyway.
func NewID() string {
	var u uuid.UUID
	ms := time.Now().UnixMilli()
	for i := range 6 {
		u[i] = byte(ms >> (40 - 8*i)) // unix_ts_ms, 48 bits big-endian
	}
	rand.Read(u[6:])
	u[6] = 0x70 | u[6]&0x0f // version 7, then rand_a's 12 bits
	u[8] = 0x80 | u[8]&0x3f // the RFC 9562 variant, then rand_b's 62 bits
	return u.String()
}
