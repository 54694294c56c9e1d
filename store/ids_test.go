package store_test

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kindkit/kindkit/store"
)

// NewID is a canonical UUIDv7 of the RFC 9562 variant whose first 48 bits
// are the millisecond it was made, so that ids made in later milliseconds
// sort after it; its remaining 74 bits vary. It costs one allocation.
func TestNewID(t *testing.T) {
	before := time.Now().UnixMilli()
	first := store.NewID()
	after := time.Now().UnixMilli()
	u, err := uuid.Parse(first)
	if err != nil || u.Version() != 7 || u.Variant() != uuid.RFC4122 || u.String() != first {
		t.Fatalf("NewID() = %q (%v): want a canonical UUIDv7", first, err)
	}
	if ms := int64(u[0])<<40 | int64(u[1])<<32 | int64(u[2])<<24 | int64(u[3])<<16 | int64(u[4])<<8 | int64(u[5]); ms < before || ms > after {
		t.Errorf("NewID() %s: millisecond %d, made between %d and %d", first, ms, before, after)
	}

	time.Sleep(2 * time.Millisecond)
	if later := store.NewID(); later <= first {
		t.Errorf("NewID() %s, 2 ms later %s: want it to sort after", first, later)
	}
	seen := map[string]bool{}
	var randA uint16
	for range 1000 {
		id := store.NewID()
		if seen[id] {
			t.Fatalf("NewID() made %s twice", id)
		}
		seen[id] = true
		u := uuid.MustParse(id)
		randA |= uint16(u[6]&0x0f)<<8 | uint16(u[7])
	}
	if randA != 0x0fff {
		t.Errorf("the 12 bits after the version took only bits %03x in 1000 ids: want them random", randA)
	}
	// Its string, and its array when crypto/rand.Read makes that escape
	// (under the race detector it does).
	read := testing.AllocsPerRun(100, func() {
		var b [10]byte
		rand.Read(b[:])
	})
	if n := testing.AllocsPerRun(100, func() { store.NewID() }); n != 1+read {
		t.Errorf("NewID made %v allocations, want %v", n, 1+read)
	}
}
