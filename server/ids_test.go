package server_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
)

var uuidV7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// Conversation and session ids are canonical lower-case UUIDv7s; a resume
// names a conversation by any case or hyphenation of its id, and ids
// stored before, as UUIDv4s or before they were UUIDs (32 hex digits),
// keep working: they go out hyphenated, as the reference schemas require.
func TestIDsAreUUIDs(t *testing.T) {
	db := memstore.New()
	legacy, v4 := "0123456789abcdef0123456789abcdef", "f1e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b"
	for _, id := range []string{legacy, v4} {
		if err := db.CreateConversation(context.Background(), &store.Conversation{ID: id, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	_, url := startServer(t, servertest.Config{Store: db, Model: parkingScript(t)})
	c := dial(t, url)
	c.Send(`{"action":"create_conversation_session","requestId":"r","agentId":"a"}`)
	ack := c.Expect("immediate_response")[0]
	conv, sid := path(ack, "data", "conversationId").(string), path(ack, "data", "sessionId").(string)
	if !uuidV7.MatchString(conv) || !uuidV7.MatchString(sid) {
		t.Fatalf("conversation id %q, session id %q: want canonical UUIDv7s", conv, sid)
	}
	for _, form := range []string{strings.ToUpper(conv), strings.ReplaceAll(conv, "-", ""), "{" + conv + "}"} {
		c.Send(`{"action":"create_conversation_session","requestId":"r","agentId":"a","conversationId":"` + form + `"}`)
		if got := path(c.Expect("immediate_response")[0], "data", "conversationId"); got != conv {
			t.Errorf("resume with %s: conversation %v, want %s", form, got, conv)
		}
	}
	c.Send(`{"action":"get_session","requestId":"g","sessionId":"` + strings.ToUpper(sid) + `"}`)
	if got := path(c.Expect("immediate_response")[0], "data", "sessionId"); got != sid {
		t.Errorf("get_session with the upper-case id: %v", got)
	}
	for _, form := range []string{v4, strings.ToUpper(v4)} {
		c.Send(`{"action":"create_conversation_session","requestId":"r","agentId":"a","conversationId":"` + form + `"}`)
		ack := c.Expect("immediate_response")[0]
		if got, sid := path(ack, "data", "conversationId"), path(ack, "data", "sessionId").(string); got != v4 || !uuidV7.MatchString(sid) {
			t.Errorf("resume of a stored UUIDv4 as %s: conversation %v, new session %s", form, got, sid)
		}
	}
	hyphenated := legacy[:8] + "-" + legacy[8:12] + "-" + legacy[12:16] + "-" + legacy[16:20] + "-" + legacy[20:]
	for _, form := range []string{legacy, strings.ToUpper(hyphenated), hyphenated} {
		c.Send(`{"action":"create_conversation_session","requestId":"r","agentId":"a","conversationId":"` + form + `"}`)
		if got := path(c.Expect("immediate_response")[0], "data", "conversationId"); got != hyphenated {
			t.Errorf("resume of a stored 32-hex id as %s: conversation %v", form, got)
		}
	}
}
