package inbox_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kindkit/kindkit/inbox"
	"github.com/kindkit/kindkit/store"
)

func TestCursorRoundTrip(t *testing.T) {
	for _, c := range []store.InboxCursor{
		{ID: "0b7c7d0e-3a1b-4c55-9b1e-3f0f0f0f0f0f"},
		{Deadline: time.Date(2026, 12, 5, 9, 0, 0, 123456789, time.UTC), ID: "p.1"},
	} {
		got, err := inbox.ParseCursor(inbox.FormatCursor(c))
		if err != nil || !got.Deadline.Equal(c.Deadline) || got.ID != c.ID {
			t.Errorf("ParseCursor(FormatCursor(%v)) = %v, %v", c, got, err)
		}
	}
	for _, bad := range []string{"", "!", "MTIz", "LjE", "MDEuYQ", "LTEuYQ", "MS4KYQ", strings.Repeat("A", 300)} {
		if _, err := inbox.ParseCursor(bad); err == nil {
			t.Errorf("ParseCursor(%q): no error", bad)
		}
	}
}

// FuzzParseCursor: any input is read or refused, never a panic; what is
// read formats back to a cursor that reads the same.
func FuzzParseCursor(f *testing.F) {
	f.Add(inbox.FormatCursor(store.InboxCursor{ID: "a"}))
	f.Add(inbox.FormatCursor(store.InboxCursor{Deadline: time.Unix(1, 5), ID: "x.y"}))
	f.Add("MTIz")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := inbox.ParseCursor(s)
		if err != nil {
			return
		}
		again, err := inbox.ParseCursor(inbox.FormatCursor(c))
		if err != nil || !again.Deadline.Equal(c.Deadline) || again.ID != c.ID {
			t.Errorf("%q: %v, then %v, %v", s, c, again, err)
		}
	})
}
