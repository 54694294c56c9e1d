package server_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/server"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
	"github.com/kindkit/kindkit/store/sqlstore"
)

// writeLog is a store that notes the name of each write it is asked for:
// on SQLite each is a commit of its own, the cost a cycle pays most for.
type writeLog struct {
	store.Store
	mu     sync.Mutex
	writes []string
}

func (w *writeLog) note(name string) {
	w.mu.Lock()
	w.writes = append(w.writes, name)
	w.mu.Unlock()
}

func (w *writeLog) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.writes
	w.writes = nil
	return out
}

func (w *writeLog) CreateConversation(ctx context.Context, c *store.Conversation, sessions ...*store.Session) error {
	w.note("CreateConversation")
	return w.Store.CreateConversation(ctx, c, sessions...)
}

func (w *writeLog) SetSupports(ctx context.Context, id string, supports []string) error {
	w.note("SetSupports")
	return w.Store.SetSupports(ctx, id, supports)
}

func (w *writeLog) SetModelPos(ctx context.Context, id string, pos int) error {
	w.note("SetModelPos")
	return w.Store.SetModelPos(ctx, id, pos)
}

func (w *writeLog) CreateSession(ctx context.Context, s *store.Session) error {
	w.note("CreateSession")
	return w.Store.CreateSession(ctx, s)
}

func (w *writeLog) SetContact(ctx context.Context, id, name, email, phone string) error {
	w.note("SetContact")
	return w.Store.SetContact(ctx, id, name, email, phone)
}

func (w *writeLog) AppendMessages(ctx context.Context, msgs ...*store.Message) error {
	w.note("AppendMessages")
	return w.Store.AppendMessages(ctx, msgs...)
}

func (w *writeLog) SavePark(ctx context.Context, p *store.Park, from *store.Lease, msgs ...*store.Message) (string, error) {
	w.note("SavePark")
	return w.Store.SavePark(ctx, p, from, msgs...)
}

func (w *writeLog) TakePark(ctx context.Context, id string, a store.Answer) (*store.Park, bool, error) {
	w.note("TakePark")
	return w.Store.TakePark(ctx, id, a)
}

func (w *writeLog) SaveStep(ctx context.Context, l store.Lease, s store.Step) error {
	w.note("SaveStep")
	return w.Store.SaveStep(ctx, l, s)
}

func (w *writeLog) RenewLease(ctx context.Context, l store.Lease) error {
	w.note("RenewLease")
	return w.Store.RenewLease(ctx, l)
}

func (w *writeLog) ClaimTurn(ctx context.Context, l store.Lease, now time.Time) (*store.Park, bool, error) {
	w.note("ClaimTurn")
	return w.Store.ClaimTurn(ctx, l, now)
}

// TestWritesPerCycle: one card cycle of the demo model (create a session,
// send a message, the card, submit, the reply) is five store writes, each
// one commit: the session comes with its conversation, and the model step
// that raised the card with the park. The history is whole all the same.
func TestWritesPerCycle(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) store.Store{
		"memory": func(t *testing.T) store.Store { return memstore.New() },
		"sqlite": func(t *testing.T) store.Store {
			s, err := sqlstore.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "k.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	} {
		t.Run(name, func(t *testing.T) {
			st := &writeLog{Store: open(t)}
			_, url := startServer(t, server.Config{Model: agent.Demo{}, Store: st})
			c := dial(t, url)
			c.Send(`{"action":"create_conversation_session","requestId":"r1","agentId":"a","supports":["choice_chips"]}`)
			data := path(c.Expect("immediate_response")[0], "data").(map[string]any)
			sid, conv := data["sessionId"].(string), data["conversationId"].(string)
			c.Send(`{"action":"send_message","requestId":"r2","sessionId":"` + sid + `","message":"hi"}`)
			evs := c.Expect("immediate_response", "interaction_required", "stream_chunk")
			iid := path(evs[1], "data", "data", "interactionId").(string)
			c.Send(`{"action":"submit_interaction","requestId":"r3","sessionId":"` + sid + `","interactionId":"` + iid + `","values":{"answers":[{"header":"Plan","options":["Team"]},{"header":"Topics","options":["Pricing"]}]}}`)
			c.Expect("immediate_response", "stream_chunk")
			if _, end := c.Turn(); end["type"] != "eventual_response" {
				t.Fatalf("turn ended with %v", end)
			}
			want := []string{"CreateConversation", "AppendMessages", "SavePark", "TakePark", "SaveStep"}
			if got := st.take(); !slices.Equal(got, want) {
				t.Errorf("writes of one cycle = %v, want %v", got, want)
			}
			msgs, _, err := st.Messages(context.Background(), conv, nil, "", 100)
			if err != nil {
				t.Fatal(err)
			}
			var roles []store.Role
			for _, m := range slices.Backward(msgs) {
				roles = append(roles, m.Role)
			}
			if want := []store.Role{store.RoleUser, store.RoleAssistant, store.RoleTool, store.RoleAssistant, store.RoleReply}; !slices.Equal(roles, want) {
				t.Errorf("history = %v, want %v", roles, want)
			}
			if s, err := st.Session(context.Background(), sid); err != nil || s.ConversationID != conv {
				t.Errorf("Session(%s) = %+v, %v; want one of %s", sid, s, err, conv)
			}
		})
	}
}
