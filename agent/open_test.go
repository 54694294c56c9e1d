package agent_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/store/memstore"
)

// A conversation and a session may be named by their opener; a name that
// is not a canonical UUID is refused, and a name taken is the store's
// error.
func TestOpenNamed(t *testing.T) {
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	eng, err := agent.NewEngine(agent.Config{Catalog: catalog, Store: memstore.New(), Model: &agent.Scripted{}})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
	convID, sessID := uuid.NewString(), uuid.NewString()
	conv, sess, err := eng.NewConversation(ctx, "", nil, agent.Opening{ConversationID: convID, SessionID: sessID})
	if err != nil || conv.ID != convID || sess.ID != sessID {
		t.Fatalf("named conversation: %v, %v, %v", conv, sess, err)
	}
	if _, _, err := eng.NewConversation(ctx, "", nil, agent.Opening{ConversationID: convID}); err == nil {
		t.Error("a conversation's name taken twice")
	}
	other := uuid.NewString()
	if s, err := eng.OpenSession(ctx, convID, agent.Opening{SessionID: other}); err != nil || s.ID != other {
		t.Errorf("named session: %v, %v", s, err)
	}
	for _, bad := range []string{"thread-1", "6F1F2B8E-5F0C-4A9E-9A57-3F0A8C1D2E41"} {
		if _, _, err := eng.NewConversation(ctx, "", nil, agent.Opening{ConversationID: bad}); err == nil {
			t.Errorf("conversation id %q taken", bad)
		}
		if _, err := eng.OpenSession(ctx, convID, agent.Opening{SessionID: bad}); err == nil {
			t.Errorf("session id %q taken", bad)
		}
	}
	if conv, _, err := eng.NewConversation(ctx, "", nil, agent.Opening{}); err != nil || uuid.Validate(conv.ID) != nil {
		t.Errorf("unnamed conversation: %v, %v", conv, err)
	}
}
