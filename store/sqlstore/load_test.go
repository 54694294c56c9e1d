package sqlstore

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kindkit/kindkit/store"
)

// TestLoad: what Load writes reads back as the store's own writes would,
// and its parks are pending parks like any other (found, due, taken).
func TestLoad(t *testing.T) {
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": sqliteDSN, "postgres": postgresDSN} {
		t.Run(name, func(t *testing.T) {
			s := openT(t, dsn(t))
			ctx := context.Background()
			now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
			var batch []Parked
			for i := range 3 {
				id := "c" + strconv.Itoa(i)
				call := store.ToolCall{ID: "call-" + id, Name: "request_choices", Arguments: `{"questions":[]}`}
				batch = append(batch, Parked{
					Conversation: store.Conversation{ID: id, Supports: []string{"choice_chips"}, CreatedAt: now},
					Session:      store.Session{ID: "s-" + id, ConversationID: id, AgentID: "a", UserName: "u", UserParticipantID: "up", AgentParticipantID: "ap"},
					Messages: []*store.Message{
						{ID: "m1-" + id, ConversationID: id, Role: store.RoleUser, Text: "hi", CreatedAt: now},
						{ID: "m2-" + id, ConversationID: id, Role: store.RoleAssistant, ToolCalls: []store.ToolCall{call}, CreatedAt: now},
					},
					Park: store.Park{ID: "p-" + id, Type: store.ParkInteraction, ConversationID: id, SessionID: "s-" + id, Kind: "choices",
						Spec: json.RawMessage(`{"questions":[]}`), Reason: "why", ToolCall: call, Deadline: now.Add(time.Duration(i) * time.Hour),
						State: store.ParkPending, Turn: json.RawMessage(`{"requestId":"r-` + id + `"}`)},
				})
			}
			if err := s.Load(ctx, batch); err != nil {
				t.Fatal(err)
			}
			for _, b := range batch {
				c, err := s.Conversation(ctx, b.Conversation.ID)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(&b.Conversation, c); d != "" {
					t.Errorf("conversation (-want +got):\n%s", d)
				}
				x, err := s.Session(ctx, b.Session.ID)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(&b.Session, x); d != "" {
					t.Errorf("session (-want +got):\n%s", d)
				}
				msgs, _, err := s.Messages(ctx, b.Conversation.ID, nil, "", 10)
				if err != nil {
					t.Fatal(err)
				}
				slices.Reverse(msgs)
				if d := cmp.Diff(b.Messages, msgs, cmpopts.IgnoreFields(store.Message{}, "Seq")); d != "" {
					t.Errorf("messages (-want +got):\n%s", d)
				}
				p, err := s.PendingPark(ctx, b.Conversation.ID)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(&b.Park, p); d != "" {
					t.Errorf("park (-want +got):\n%s", d)
				}
			}
			due, err := s.ExpiredParks(ctx, now.Add(90*time.Minute), 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(due) != 2 || due[0].ID != "p-c0" || due[1].ID != "p-c1" {
				t.Errorf("ExpiredParks = %d parks, want p-c0 and p-c1", len(due))
			}
			if _, ok, err := s.TakePark(ctx, "p-c2", store.Answer{State: store.ParkResolved}); err != nil || !ok {
				t.Errorf("TakePark = %v, %v", ok, err)
			}
		})
	}
}

// TestLoadKeepsWALShort: a Load is one write of many pages, so it
// checkpoints what it wrote, and the WAL of a fill is one batch long, not
// the whole fill.
func TestLoadKeepsWALShort(t *testing.T) {
	dsn := sqliteDSN(t)
	s := openT(t, dsn)
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	n := 0
	load := func() {
		batch := make([]Parked, 300)
		for i := range batch {
			id := "c" + strconv.Itoa(n)
			n++
			batch[i] = Parked{
				Conversation: store.Conversation{ID: id, CreatedAt: now},
				Session:      store.Session{ID: "s-" + id, ConversationID: id, UserParticipantID: "up", AgentParticipantID: "ap"},
				Messages:     []*store.Message{{ID: "m-" + id, ConversationID: id, Role: store.RoleUser, Text: "hi", CreatedAt: now}},
				Park: store.Park{ID: "p-" + id, Type: store.ParkInteraction, ConversationID: id, SessionID: "s-" + id, Kind: "choices",
					Deadline: now.Add(time.Hour), State: store.ParkPending},
			}
		}
		if err := s.Load(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	// The WAL file keeps the length of its longest run between two
	// checkpoints: a few loads' worth once they start it over, and all of
	// them when none does.
	for range 3 {
		load()
	}
	three := walFrames(t, dsn)
	for range 6 {
		load()
	}
	if nine := walFrames(t, dsn); nine > 1.5*three {
		t.Errorf("the WAL holds %.0f frames after 9 loads, %.0f after 3: want it started over, not grown", nine, three)
	}
}
