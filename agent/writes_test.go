package agent_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
	"github.com/kindkit/kindkit/store/storetest"
)

// byResults answers with its i-th response once the turn's history holds
// i tool results, and "done" after the last: a model with no position of
// its own, as a real one is.
type byResults []agent.ModelResponse

func (m byResults) Respond(ctx context.Context, req agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	n := 0
	for _, msg := range req.History {
		if msg.Role == store.RoleTool {
			n++
		}
	}
	if n >= len(m) {
		return agent.ModelResponse{Text: "done"}, nil
	}
	r := m[n]
	r.ToolCalls = slices.Clone(r.ToolCalls)
	return r, nil
}

func call(id, name, args string) agent.ModelResponse {
	return agent.ModelResponse{ToolCalls: []store.ToolCall{{ID: id, Name: name, Arguments: args}}}
}

// resolve answers the conversation's pending park with picked.
func resolve(t *testing.T, e *agent.Engine, f *follower, sess *store.Session, st store.Store) {
	t.Helper()
	p, err := st.PendingPark(context.Background(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := e.Submit(context.Background(), sess, p.ID, agent.Answer{Values: []byte(picked)}, nil); err != nil || !ok {
		t.Fatalf("Submit = %v, %v", ok, err)
	}
}

// An owed turn that raises again: the model step is stored in the park's
// write, under the lease, and the turn stops being owed in it.
func TestRaiseAgainOneWrite(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st := &storetest.Writes{Store: open(t)}
			e := engine(t, st, byResults{call("call-1", "request_choices", raise), call("call-2", "request_choices", raise)}, clockwork.NewFakeClock())
			sess := conversation(t, st, "", "choice_chips")
			f := newFollower()
			f.start(e, sess, "hello")
			f.next(t, agent.EventPrompt)
			if got, want := st.Take(), []string{"CreateConversation", "CreateSession", "StartTurn", "SavePark"}; !slices.Equal(got, want) {
				t.Errorf("writes up to the first park = %v, want %v", got, want)
			}
			resolve(t, e, f, sess, st)
			if again := f.next(t, agent.EventPrompt); again.Park.ToolCall.ID != "call-2" {
				t.Fatalf("second prompt waits on %+v, want call-2", again.Park.ToolCall)
			}
			e.Wait()
			if got, want := st.Take(), []string{"TakePark", "SavePark"}; !slices.Equal(got, want) {
				t.Errorf("writes from the answer to the second park = %v, want %v", got, want)
			}
			want := []store.Role{store.RoleUser, store.RoleAssistant, store.RoleTool, store.RoleAssistant}
			if got := history(t, st); !slices.Equal(got, want) {
				t.Errorf("history = %v, want %v", got, want)
			}
			noOwedTurns(t, st, time.Now(), "after parking again")
		})
	}
}

// A host tool's call is in the store before the tool runs, and an owed
// turn's stored state has it pending: a process that dies while the tool
// runs leaves the call to run again.
func TestHostToolCallStoredFirst(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			var (
				mu             sync.Mutex
				stored, queued bool
			)
			book, err := agent.NewTool("book", "Book a slot.", func(ctx context.Context, a bookArgs) (any, error) {
				msgs, _, err := st.Messages(context.Background(), "c1", []store.Role{store.RoleAssistant}, "", 1)
				if err != nil {
					return nil, err
				}
				owed, err := st.OwedTurns(context.Background(), time.Now().Add(time.Hour), 10)
				if err != nil {
					return nil, err
				}
				mu.Lock()
				defer mu.Unlock()
				stored = len(msgs) == 1 && len(msgs[0].ToolCalls) == 1 && msgs[0].ToolCalls[0].ID == "call-2"
				var state struct{ Pending []store.ToolCall } // of the engine's state, as it keeps it
				queued = len(owed) == 1 && json.Unmarshal(owed[0].Turn, &state) == nil && len(state.Pending) > 0 && state.Pending[0].ID == "call-2"
				return "booked", nil
			})
			if err != nil {
				t.Fatal(err)
			}
			e := newEngine(t, agent.Config{Store: st, Tools: []agent.HostTool{book}, Clock: clockwork.NewFakeClock(),
				Model: byResults{call("call-1", "request_choices", raise), call("call-2", "book", `{"slot":"Tue"}`)}})
			sess := conversation(t, st, "", "choice_chips")
			f := newFollower()
			f.start(e, sess, "hello")
			f.next(t, agent.EventPrompt)
			resolve(t, e, f, sess, st)
			if r := f.next(t, agent.EventReply); r.Reply.Text != "done" {
				t.Errorf("reply = %q", r.Reply.Text)
			}
			e.Wait()
			mu.Lock()
			defer mu.Unlock()
			if !stored {
				t.Error("the host tool ran before its call was stored")
			}
			if !queued {
				t.Error("while the host tool ran, the owed turn's stored state did not have its call pending")
			}
			want := []store.Role{store.RoleUser, store.RoleAssistant, store.RoleTool, store.RoleAssistant, store.RoleTool, store.RoleAssistant, store.RoleReply}
			if got := history(t, st); !slices.Equal(got, want) {
				t.Errorf("history = %v, want %v", got, want)
			}
		})
	}
}

// A raise by a model with a position (the scripted one) moves it before
// the park: the resumed turn asks the model at the next position.
func TestRaiseStoresModelPosition(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			e := engine(t, st, script(t, "Pro it is."), clockwork.NewFakeClock())
			parkOne(t, e, st, "hello")
			conv, err := st.Conversation(context.Background(), "c1")
			if err != nil {
				t.Fatal(err)
			}
			if conv.ModelPos != 1 {
				t.Errorf("model position when parked = %d, want 1", conv.ModelPos)
			}
			if got, want := history(t, st), []store.Role{store.RoleUser, store.RoleAssistant}; !slices.Equal(got, want) {
				t.Errorf("history when parked = %v, want %v", got, want)
			}
		})
	}
}

// The words a model says before a card and the answer after it are blocks
// of their own in the stored reply and in the reply event: a heading that
// opens the answer is not glued onto the last sentence before the card.
func TestStepsAreBlocks(t *testing.T) {
	st := memstore.New()
	before := call("call-1", "request_choices", raise)
	before.Text = "Let me ask you something first."
	e := engine(t, st, byResults{before, {Text: "## Comparison\n\nPro has SSO."}}, clockwork.NewFakeClock())
	sess := conversation(t, st, "", "choice_chips")
	f := newFollower()
	f.start(e, sess, "compare the plans")
	f.next(t, agent.EventPrompt)
	resolve(t, e, f, sess, st)
	const want = "Let me ask you something first.\n\n## Comparison\n\nPro has SSO."
	if ev := f.next(t, agent.EventReply); ev.Reply.Text != want {
		t.Errorf("the reply event's text = %q, want %q", ev.Reply.Text, want)
	}
	msgs, _, err := st.Messages(context.Background(), "c1", []store.Role{store.RoleReply}, "", 1)
	if err != nil || len(msgs) != 1 || msgs[0].Text != want {
		t.Errorf("the stored reply = %v, %v; want %q", msgs, err, want)
	}
}
