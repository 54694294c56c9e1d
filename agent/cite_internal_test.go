package agent

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSnippetCutsOnRuneBoundaries(t *testing.T) {
	for _, tc := range []struct {
		content string
		want    int // bytes kept
	}{
		{"short", 5},
		{strings.Repeat("a", 280), 280},
		{strings.Repeat("a", 281), 280},
		{strings.Repeat("a", 279) + "é", 279}, // é would end at byte 281
		{strings.Repeat("a", 278) + "é", 280},
		{strings.Repeat("a", 278) + "€x", 278}, // € is three bytes
		{strings.Repeat("€", 100), 279},
	} {
		got := snippet(tc.content)
		if len(got) != tc.want || !utf8.ValidString(got) || !strings.HasPrefix(tc.content, got) {
			t.Errorf("snippet of %d bytes: %d bytes (valid %v), want %d", len(tc.content), len(got), utf8.ValidString(got), tc.want)
		}
	}
}
