package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/server"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
)

// listConversations sends list_conversations and returns the list.
func listConversations(c *client) []any {
	c.T.Helper()
	c.Send(`{"action":"list_conversations","requestId":"l"}`)
	ev := c.Expect("immediate_response")[0]
	if ev["status"] != 200.0 || ev["message"] != "Conversations" || ev["requestId"] != "l" {
		c.T.Fatalf("list_conversations ack: %v", ev)
	}
	list, ok := path(ev, "data", "conversations").([]any)
	if !ok {
		c.T.Fatalf("no conversations array: %v", ev)
	}
	return list
}

func conversationIDs(list []any) []string {
	var ids []string
	for _, x := range list {
		ids = append(ids, path(x, "conversationId").(string))
	}
	return ids
}

// Without auth, a conversation id is the bearer secret: a connection lists
// the conversations it has sessions in, newest first, and nobody else's.
func TestListConversationsAnonymous(t *testing.T) {
	model, err := agent.NewScripted([]agent.ScriptEntry{{Kind: "text", Text: "Lisbon it is."}})
	if err != nil {
		t.Fatal(err)
	}
	_, url := startServer(t, servertest.Config{Model: model})
	a := dial(t, url)
	if list := listConversations(a); len(list) != 0 {
		t.Fatalf("a fresh connection lists %v", list)
	}
	older := create(a, "")
	a.Send(`{"action":"get_session","requestId":"g","sessionId":"` + older + `"}`)
	olderConv := path(a.Expect("immediate_response")[0], "data", "conversationId").(string)
	sid := create(a, "")
	long := "Plan a trip\n\tto   Lisbon " + strings.Repeat("and Porto ", 20)
	a.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"` + strings.ReplaceAll(strings.ReplaceAll(long, "\n", `\n`), "\t", `\t`) + `"}`)
	a.Expect("immediate_response")
	if _, ev := a.Turn(); ev["type"] != "eventual_response" {
		t.Fatalf("turn ended with %v", ev)
	}

	list := listConversations(a)
	if len(list) != 2 || path(list[1], "conversationId") != olderConv {
		t.Fatalf("list = %v, want the new conversation, then %s", list, olderConv)
	}
	newest := list[0]
	title := path(newest, "title").(string)
	if !strings.HasPrefix(title, "Plan a trip to Lisbon and Porto") || !strings.HasSuffix(title, "…") || len([]rune(title)) != 80 {
		t.Errorf("title = %q, want the first message on one line, cut to 80 runes", title)
	}
	if n := path(newest, "messageCount"); n != 2.0 {
		t.Errorf("messageCount = %v, want 2 (the message and the reply)", n)
	}
	if at, err := time.Parse(time.RFC3339Nano, path(newest, "updatedAt").(string)); err != nil || time.Since(at) > time.Minute {
		t.Errorf("updatedAt = %v (%v)", path(newest, "updatedAt"), err)
	}
	if path(list[1], "title") != "" || path(list[1], "messageCount") != 0.0 {
		t.Errorf("an empty conversation lists as %v", list[1])
	}

	b := dial(t, url)
	create(b, "")
	if ids := conversationIDs(listConversations(b)); len(ids) != 1 || ids[0] == olderConv {
		t.Errorf("another connection lists %v", ids)
	}
	resumeConversation(b, olderConv, "")
	if ids := conversationIDs(listConversations(b)); len(ids) != 2 || !strings.Contains(strings.Join(ids, " "), olderConv) {
		t.Errorf("after resuming %s, the list is %v", olderConv, ids)
	}
}

// With auth, a principal lists what it owns, wherever it connects from.
func TestListConversationsOwned(t *testing.T) {
	_, url := startServer(t, servertest.Config{Model: parkingScript(t), AuthSecret: secret})
	exp := time.Now().Add(time.Hour)
	alice := url + "?token=" + server.SignToken(secret, server.Principal{Sub: "alice"}, exp)
	_, conv, _ := park(t, alice)
	other := dial(t, alice)
	list := listConversations(other)
	if ids := conversationIDs(list); len(ids) != 1 || ids[0] != conv {
		t.Fatalf("alice lists %v, want [%s]", ids, conv)
	}
	if n := path(list[0], "messageCount"); n != 1.0 {
		t.Errorf("a parked conversation counts %v messages, want 1", n)
	}
	for name, u := range map[string]string{
		"bob":       url + "?token=" + server.SignToken(secret, server.Principal{Sub: "bob"}, exp),
		"anonymous": url + "?token=forged",
	} {
		if ids := conversationIDs(listConversations(dial(t, u))); len(ids) != 0 {
			t.Errorf("%s lists %v", name, ids)
		}
	}
}

type failingList struct{ store.Store }

func (failingList) ListConversations(context.Context, store.ConversationFilter, int) ([]store.ConversationSummary, error) {
	return nil, errors.New("disk on fire")
}

func TestListConversationsStorageError(t *testing.T) {
	_, url := startServer(t, servertest.Config{Model: parkingScript(t), Store: failingList{memstore.New()}})
	c := dial(t, url)
	c.Send(`{"action":"list_conversations","requestId":"l"}`)
	ev := c.Expect("error")[0]
	if errorCode(ev) != "STORAGE_ERROR" || ev["requestId"] != "l" || !strings.Contains(path(ev, "error", "message").(string), "Failed to list conversations.") {
		t.Errorf("got %v", ev)
	}
}
