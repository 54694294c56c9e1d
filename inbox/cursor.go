package inbox

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kindkit/kindkit/store"
)

// ErrBadCursor is ParseCursor's error for a cursor this server did not
// make.
var ErrBadCursor = errors.New("inbox: not a cursor of this inbox; start from the first page")

// maxCursor bounds a cursor's length: a deadline and an ask's id.
const maxCursor = 256

// FormatCursor is c as a page's nextCursor: base64url of the deadline's
// Unix nanoseconds (0 for none), a '.', and the ask's id.
func FormatCursor(c store.InboxCursor) string {
	n := int64(0)
	if !c.Deadline.IsZero() {
		n = c.Deadline.UnixNano()
	}
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(n, 10) + "." + c.ID))
}

// ParseCursor reads a cursor FormatCursor made; ErrBadCursor for anything
// else.
func ParseCursor(s string) (store.InboxCursor, error) {
	if len(s) > maxCursor {
		return store.InboxCursor{}, ErrBadCursor
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return store.InboxCursor{}, ErrBadCursor
	}
	num, id, ok := strings.Cut(string(b), ".")
	if !ok || id == "" || !utf8.ValidString(id) || strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return store.InboxCursor{}, ErrBadCursor
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != num {
		return store.InboxCursor{}, ErrBadCursor
	}
	c := store.InboxCursor{ID: id}
	if n != 0 {
		c.Deadline = time.Unix(0, n).UTC()
	}
	return c, nil
}
