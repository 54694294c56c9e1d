// Package storetest is the conformance suite every store.Store must pass,
// and a benchmark of the store operations of one interaction cycle.
//
// A store's test calls Run with a function that opens a fresh, empty store:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return memstore.New() })
//	}
//
// The in-memory store (store/memstore) is the reference: the suite states
// its semantics, and every other store must behave the same.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kindkit/kindkit/store"
)

// Run runs the suite. open is called once per sub-test and must return an
// empty store; it registers its own cleanup with t.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		f    func(t *testing.T, s store.Store)
	}{
		{"Conversations", testConversations},
		{"ListConversations", testListConversations},
		{"Sessions", testSessions},
		{"ConversationWithSessions", testConversationWithSessions},
		{"MessagesRoundTrip", testMessagesRoundTrip},
		{"MessagesPaging", testMessagesPaging},
		{"MessagesErrors", testMessagesErrors},
		{"MessageSeqs", testMessageSeqs},
		{"StartTurn", testStartTurn},
		{"StartTurnWhileWaiting", testStartTurnWhileWaiting},
		{"StartTurnRacesTake", testStartTurnRacesTake},
		{"StartFirstTurn", testStartFirstTurn},
		{"ParkRoundTrip", testParkRoundTrip},
		{"ParkReplaced", testParkReplaced},
		{"ParkWithMessages", testParkWithMessages},
		{"ParkFromLease", testParkFromLease},
		{"TakeParkOnce", testTakeParkOnce},
		{"ParkGroups", testParkGroups},
		{"ParkGroupResumesOnce", testParkGroupResumesOnce},
		{"ExpiredParks", testExpiredParks},
		{"TakeStoresAnswer", testTakeStoresAnswer},
		{"EndedParks", testEndedParks},
		{"OwedTurnLease", testOwedTurnLease},
		{"NUL", testNUL},
		{"NoAliases", testNoAliases},
		{"MixedKeys", testMixedKeys},
		{"Inbox", testInbox},
		{"OutboxOff", testOutboxOff},
		{"OutboxEvents", testOutboxEvents},
		{"OutboxLease", testOutboxLease},
		{"OutboxConcurrentLeases", testOutboxConcurrentLeases},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.f(t, open(t)) })
	}
}

// opts compare records: times by Equal (cmp uses the method), spec JSON by
// meaning, and nil and empty slices and maps alike.
// A message's Seq is compared by testMessageSeqs (withSeq) only: the
// others compare with messages they made, which have none.
var (
	withSeq = cmp.Options{
		cmp.FilterPath(func(p cmp.Path) bool { return p.Last().Type() != reflect.TypeFor[json.RawMessage]() }, cmpopts.EquateEmpty()),
		cmp.Comparer(func(a, b json.RawMessage) bool { return jsonEqual(a, b) }),
	}
	opts = append(cmp.Options{cmpopts.IgnoreFields(store.Message{}, "Seq")}, withSeq...)
)

func jsonEqual(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return cmp.Equal(x, y)
}

// at is a time with microsecond precision in a zone that is not UTC, so a
// store must keep the instant, not the location.
func at(sec int) time.Time {
	base := time.Date(2026, 11, 30, 9, 0, 0, 123456000, time.FixedZone("X", 5*3600+1800))
	return base.Add(time.Duration(sec) * time.Second)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("%s: err = %v, want store.ErrNotFound", what, err)
	}
}

func newConv(t *testing.T, s store.Store, id string) *store.Conversation {
	t.Helper()
	c := &store.Conversation{ID: id, Owner: "owner-" + id, Supports: []string{"choices", "identity_intake"}, ModelPos: 3, CreatedAt: at(0)}
	must(t, s.CreateConversation(context.Background(), c))
	return c
}

func testConversations(t *testing.T, s store.Store) {
	ctx := context.Background()
	want := newConv(t, s, "c1")
	got, err := s.Conversation(ctx, "c1")
	must(t, err)
	if d := cmp.Diff(want, got, opts); d != "" {
		t.Errorf("Conversation (-want +got):\n%s", d)
	}
	_, err = s.Conversation(ctx, "nope")
	wantNotFound(t, "Conversation(nope)", err)

	// A conversation with nothing set round-trips as zero values.
	must(t, s.CreateConversation(ctx, &store.Conversation{ID: "c0"}))
	got, err = s.Conversation(ctx, "c0")
	must(t, err)
	if got.Supports != nil || !got.CreatedAt.IsZero() || got.Owner != "" || got.ModelPos != 0 {
		t.Errorf("empty conversation = %+v, want zero fields", got)
	}

	must(t, s.SetSupports(ctx, "c1", []string{"choices"}))
	got, err = s.Conversation(ctx, "c1")
	must(t, err)
	if !slices.Equal(got.Supports, []string{"choices"}) {
		t.Errorf("after SetSupports([choices]): Supports = %q", got.Supports)
	}
	must(t, s.SetSupports(ctx, "c1", nil))
	got, err = s.Conversation(ctx, "c1")
	must(t, err)
	if got.Supports != nil {
		t.Errorf("after SetSupports(nil): Supports = %q, want nil", got.Supports)
	}
	must(t, s.SetSupports(ctx, "c1", []string{"a", "b"}))
	must(t, s.SetModelPos(ctx, "c1", 7))
	got, err = s.Conversation(ctx, "c1")
	must(t, err)
	if !slices.Equal(got.Supports, []string{"a", "b"}) || got.ModelPos != 7 {
		t.Errorf("after SetSupports([a b]), SetModelPos(7): Supports = %q, ModelPos = %d", got.Supports, got.ModelPos)
	}
	// Other fields are untouched.
	if got.Owner != want.Owner || !got.CreatedAt.Equal(want.CreatedAt) {
		t.Errorf("Owner, CreatedAt = %q, %v; want %q, %v", got.Owner, got.CreatedAt, want.Owner, want.CreatedAt)
	}
	wantNotFound(t, "SetSupports(nope)", s.SetSupports(ctx, "nope", []string{"x"}))
	wantNotFound(t, "SetModelPos(nope)", s.SetModelPos(ctx, "nope", 1))

	// An id that is taken is refused, and the conversation that has it
	// is left as it was: a caller may name a conversation (the engine's
	// Opening.ConversationID), and two may race to make the same one.
	if err := s.CreateConversation(ctx, &store.Conversation{ID: "c1", Owner: "someone else"}); err == nil {
		t.Error("CreateConversation(c1) again: no error")
	}
	got, err = s.Conversation(ctx, "c1")
	must(t, err)
	if got.Owner != want.Owner || got.ModelPos != 7 {
		t.Errorf("after a second CreateConversation(c1): %+v, want the first one kept", got)
	}
}

func testSessions(t *testing.T, s store.Store) {
	ctx := context.Background()
	newConv(t, s, "c1")
	want := &store.Session{ID: "s1", ConversationID: "c1", AgentID: "agent", AgentName: "Agent", UserName: "Ann",
		ContactEmail: "ann@example.com", ContactPhone: "", UserParticipantID: "up", AgentParticipantID: "ap"}
	must(t, s.CreateSession(ctx, want))
	got, err := s.Session(ctx, "s1")
	must(t, err)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Session (-want +got):\n%s", d)
	}
	_, err = s.Session(ctx, "nope")
	wantNotFound(t, "Session(nope)", err)
	wantNotFound(t, "CreateSession(unknown conversation)", s.CreateSession(ctx, &store.Session{ID: "s2", ConversationID: "nope"}))

	// Only non-empty fields are merged.
	must(t, s.SetContact(ctx, "s1", "", "", "+15551234567"))
	want.ContactPhone = "+15551234567"
	got, err = s.Session(ctx, "s1")
	must(t, err)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("after SetContact(phone) (-want +got):\n%s", d)
	}
	must(t, s.SetContact(ctx, "s1", "Bea", "bea@example.com", ""))
	want.UserName, want.ContactEmail = "Bea", "bea@example.com"
	got, err = s.Session(ctx, "s1")
	must(t, err)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("after SetContact(name, email) (-want +got):\n%s", d)
	}
	must(t, s.SetContact(ctx, "s1", "", "", ""))
	got, err = s.Session(ctx, "s1")
	must(t, err)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("after SetContact() with nothing (-want +got):\n%s", d)
	}
	wantNotFound(t, "SetContact(nope)", s.SetContact(ctx, "nope", "x", "", ""))
}

// testConversationWithSessions: a conversation and its first sessions are
// one write. The sessions are bound to it whatever they say, and a session
// that cannot be stored leaves no conversation behind.
func testConversationWithSessions(t *testing.T, s store.Store) {
	ctx := context.Background()
	conv := &store.Conversation{ID: "c1", Owner: "ann", Supports: []string{"choices"}, ModelPos: 2, CreatedAt: at(0)}
	first := &store.Session{ID: "s1", ConversationID: "c1", AgentID: "agent", AgentName: "Agent", UserName: "Ann",
		ContactEmail: "ann@example.com", UserParticipantID: "up1", AgentParticipantID: "ap1"}
	second := &store.Session{ID: "s2", ConversationID: "elsewhere", AgentID: "agent", UserParticipantID: "up2", AgentParticipantID: "ap2"}
	must(t, s.CreateConversation(ctx, conv, first, second))
	got, err := s.Conversation(ctx, "c1")
	must(t, err)
	if d := cmp.Diff(conv, got, opts); d != "" {
		t.Errorf("Conversation (-want +got):\n%s", d)
	}
	for _, want := range []*store.Session{first, second} {
		got, err := s.Session(ctx, want.ID)
		must(t, err)
		bound := *want
		bound.ConversationID = "c1"
		if d := cmp.Diff(&bound, got); d != "" {
			t.Errorf("Session(%s) (-want +got):\n%s", want.ID, d)
		}
	}

	// A session id that is taken, by a stored session or by another of
	// the same call, fails the whole write.
	for _, tc := range []struct {
		conv     string
		sessions []*store.Session
	}{
		{"c2", []*store.Session{{ID: "s3", ConversationID: "c2"}, {ID: "s1", ConversationID: "c2"}}},
		{"c3", []*store.Session{{ID: "s4", ConversationID: "c3"}, {ID: "s4", ConversationID: "c3"}}},
	} {
		if err := s.CreateConversation(ctx, &store.Conversation{ID: tc.conv, CreatedAt: at(1)}, tc.sessions...); err == nil {
			t.Errorf("CreateConversation(%s) with a taken session id: no error", tc.conv)
		}
		_, err := s.Conversation(ctx, tc.conv)
		wantNotFound(t, "Conversation("+tc.conv+") after a failed create", err)
		_, err = s.Session(ctx, tc.sessions[0].ID)
		wantNotFound(t, "Session("+tc.sessions[0].ID+") after a failed create", err)
	}
	if got, err := s.Session(ctx, "s1"); err != nil || got.ConversationID != "c1" {
		t.Errorf("Session(s1) after a failed create = %+v, %v; want c1's, as it was", got, err)
	}
}

func testListConversations(t *testing.T, s store.Store) {
	ctx := context.Background()
	conv := func(id, owner string, created time.Time, msgs ...*store.Message) {
		must(t, s.CreateConversation(ctx, &store.Conversation{ID: id, Owner: owner, CreatedAt: created}))
		if len(msgs) > 0 {
			must(t, s.AppendMessages(ctx, msgs...))
		}
	}
	conv("a", "ann", at(0), history("a", 0, 10)...) // users at 0 and 5, replies at 4 and 9
	conv("b", "ann", at(5))                         // no messages yet
	conv("c", "bob", at(1), history("c", 0, 2)...)
	conv("e", "ann", at(0), history("e", 1, 3)...) // the model and a tool only
	conv("0", "ann", time.Time{})                  // no time at all: last
	sum := func(id, title string, updated time.Time, n int) store.ConversationSummary {
		return store.ConversationSummary{ID: id, Title: title, UpdatedAt: updated, MessageCount: n}
	}
	a, b, c, e, z := sum("a", "text 0 ✓", at(9), 4), sum("b", "", at(5), 0), sum("c", "text 0 ✓", at(1), 1), sum("e", "", at(3), 0), sum("0", "", time.Time{}, 0)
	check := func(name string, f store.ConversationFilter, limit int, want ...store.ConversationSummary) {
		t.Helper()
		got, err := s.ListConversations(ctx, f, limit)
		must(t, err)
		if d := cmp.Diff(want, got, opts); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}
	check("ann", store.ConversationFilter{Owner: "ann"}, 10, a, b, e, z)
	check("ann, limit 2", store.ConversationFilter{Owner: "ann"}, 2, a, b)
	check("bob", store.ConversationFilter{Owner: "bob"}, 10, c)
	check("nobody", store.ConversationFilter{Owner: "nobody"}, 10)
	check("anonymous", store.ConversationFilter{}, 10)
	check("limit 0", store.ConversationFilter{Owner: "ann"}, 0)
	check("ids", store.ConversationFilter{Owner: "ignored", IDs: []string{"c", "a", "missing", "a"}}, 10, a, c)
	check("no ids", store.ConversationFilter{Owner: "ann", IDs: []string{}}, 10)

	// A new message moves its conversation to the front and counts.
	must(t, s.AppendMessages(ctx, &store.Message{ID: "b-m0", ConversationID: "b", Role: store.RoleUser, Text: "first words", CreatedAt: at(20)}))
	check("after a message", store.ConversationFilter{Owner: "ann"}, 10, sum("b", "first words", at(20), 1), a, e, z)
}

// history is a turn's worth of messages of every role, with every field set
// somewhere.
func history(conv string, from, n int) []*store.Message {
	var out []*store.Message
	roles := []store.Role{store.RoleUser, store.RoleAssistant, store.RoleTool, store.RoleAssistant, store.RoleReply}
	for i := from; i < from+n; i++ {
		m := &store.Message{ID: fmt.Sprintf("%s-m%02d", conv, i), ConversationID: conv, Role: roles[i%len(roles)],
			Text: fmt.Sprintf("text %d ✓", i), CreatedAt: at(i)}
		switch m.Role {
		case store.RoleAssistant:
			if i%2 == 1 {
				m.ToolCalls = []store.ToolCall{
					{ID: fmt.Sprintf("call-%d", i), Name: "raise_choices", Arguments: `{"question":"Which?","options":["a","b"]}`},
					{ID: fmt.Sprintf("call-%d-b", i), Name: "lookup", Arguments: "{}"},
				}
				m.Text = ""
			}
		case store.RoleTool:
			m.ToolCallID, m.ToolName, m.IsError = fmt.Sprintf("call-%d", i-1), "raise_choices", i%3 == 0
		}
		out = append(out, m)
	}
	return out
}

func reversed(ms []*store.Message, roles ...store.Role) []*store.Message {
	var out []*store.Message
	for i := len(ms) - 1; i >= 0; i-- {
		if len(roles) == 0 || slices.Contains(roles, ms[i].Role) {
			out = append(out, ms[i])
		}
	}
	return out
}

func testMessagesRoundTrip(t *testing.T, s store.Store) {
	ctx := context.Background()
	newConv(t, s, "c1")
	newConv(t, s, "c2")
	all := history("c1", 0, 10)
	must(t, s.AppendMessages(ctx, all[:1]...))
	must(t, s.AppendMessages(ctx, all[1:6]...))
	must(t, s.AppendMessages(ctx, history("c2", 0, 4)...)) // interleaved: must not show in c1
	must(t, s.AppendMessages(ctx, all[6:]...))
	must(t, s.AppendMessages(ctx)) // nothing

	got, more, err := s.Messages(ctx, "c1", nil, "", 100)
	must(t, err)
	if d := cmp.Diff(reversed(all), got, opts); d != "" {
		t.Errorf("Messages(all) (-want +got):\n%s", d)
	}
	if more {
		t.Error("Messages(all, limit 100): more = true")
	}
	// Exact round-trip of the tool fields.
	for _, m := range got {
		if m.Role == store.RoleTool && m.ToolCallID == "" {
			t.Errorf("tool message %s lost its ToolCallID", m.ID)
		}
	}

	roles := []store.Role{store.RoleUser, store.RoleReply}
	got, more, err = s.Messages(ctx, "c1", roles, "", 100)
	must(t, err)
	if d := cmp.Diff(reversed(all, roles...), got, opts); d != "" {
		t.Errorf("Messages(user, reply) (-want +got):\n%s", d)
	}
	if more {
		t.Error("Messages(user, reply): more = true")
	}
	got, _, err = s.Messages(ctx, "c1", []store.Role{store.RoleTool}, "", 100)
	must(t, err)
	if d := cmp.Diff(reversed(all, store.RoleTool), got, opts); d != "" {
		t.Errorf("Messages(tool) (-want +got):\n%s", d)
	}

	// An empty conversation has no messages and no more.
	newConv(t, s, "c3")
	got, more, err = s.Messages(ctx, "c3", nil, "", 10)
	must(t, err)
	if len(got) != 0 || more {
		t.Errorf("Messages(empty) = %d messages, more %v", len(got), more)
	}
}

// testMessageSeqs: every write that stores messages sets their Seq, in the
// order of the conversation's history whichever write stored them, the
// reads return the same, and MessagesAfter lists the messages after a seq,
// oldest first, up to its limit.
func testMessageSeqs(t *testing.T, s store.Store) {
	ctx := context.Background()
	newConv(t, s, "c1")
	newConv(t, s, "c2")
	var stored []*store.Message
	note := func(msgs ...*store.Message) {
		for _, m := range msgs {
			if m.Seq <= 0 {
				t.Errorf("message %s stored with Seq %d", m.ID, m.Seq)
			}
		}
		stored = append(stored, msgs...)
	}
	all := history("c1", 0, 3)
	must(t, s.AppendMessages(ctx, all...))
	note(all...)
	must(t, s.AppendMessages(ctx, history("c2", 0, 2)...)) // another conversation's between
	l := store.Lease{ParkID: "t1", Owner: "A", Until: at(60)}
	user := &store.Message{ID: "m-user", ConversationID: "c1", Role: store.RoleUser, Text: "hi", CreatedAt: at(4)}
	if _, ok, err := s.StartTurn(ctx, user, turnRecord("c1", l), nil, nil); err != nil || !ok {
		t.Fatalf("StartTurn = %v, %v", ok, err)
	}
	note(user)
	step := []*store.Message{{ID: "m-a", ConversationID: "c1", Role: store.RoleAssistant, Text: "a", CreatedAt: at(5)},
		{ID: "m-b", ConversationID: "c1", Role: store.RoleAssistant, Text: "b", CreatedAt: at(5)}}
	must(t, s.SaveStep(ctx, l, store.Step{Turn: json.RawMessage(`{}`), Messages: step}))
	note(step...)
	p := newPark("c1", "p1", at(600))
	raise := &store.Message{ID: "m-raise", ConversationID: "c1", Role: store.RoleAssistant, ToolCalls: []store.ToolCall{p.ToolCall}, CreatedAt: at(6)}
	if _, err := s.SavePark(ctx, p, &l, raise); err != nil {
		t.Fatalf("SavePark: %v", err)
	}
	note(raise)
	answer := toolResult(p, `{"status":"submitted"}`)
	if _, ok, err := s.TakePark(ctx, "p1", store.Answer{State: store.ParkResolved, Messages: []*store.Message{answer}}); err != nil || !ok {
		t.Fatalf("TakePark = %v, %v", ok, err)
	}
	note(answer)
	for i := 1; i < len(stored); i++ {
		if stored[i].Seq <= stored[i-1].Seq {
			t.Errorf("message %s has Seq %d, not after %s's %d", stored[i].ID, stored[i].Seq, stored[i-1].ID, stored[i-1].Seq)
		}
	}
	got, err := s.MessagesAfter(ctx, "c1", 0, 100)
	must(t, err)
	if d := cmp.Diff(stored, got, withSeq); d != "" {
		t.Errorf("MessagesAfter(0) (-want +got):\n%s", d)
	}
	got, err = s.MessagesAfter(ctx, "c1", stored[2].Seq, 2)
	must(t, err)
	if d := cmp.Diff(stored[3:5], got, withSeq); d != "" {
		t.Errorf("MessagesAfter(the third, limit 2) (-want +got):\n%s", d)
	}
	if got, err := s.MessagesAfter(ctx, "c1", stored[len(stored)-1].Seq, 10); err != nil || len(got) != 0 {
		t.Errorf("MessagesAfter(the last) = %d messages, %v; want none", len(got), err)
	}
	if got, err := s.MessagesAfter(ctx, "nope", 0, 10); err != nil || len(got) != 0 {
		t.Errorf("MessagesAfter(unknown conversation) = %d messages, %v; want none", len(got), err)
	}
	page, _, err := s.Messages(ctx, "c1", nil, "", 100)
	must(t, err)
	if d := cmp.Diff(reversed(stored), page, withSeq); d != "" {
		t.Errorf("Messages (-want +got):\n%s", d)
	}
}

func testMessagesPaging(t *testing.T, s store.Store) {
	ctx := context.Background()
	newConv(t, s, "c1")
	all := history("c1", 0, 23)
	for i := 0; i < len(all); i += 4 {
		must(t, s.AppendMessages(ctx, all[i:min(i+4, len(all))]...))
	}
	for _, tc := range []struct {
		roles []store.Role
		limit int
	}{
		{nil, 1}, {nil, 4}, {nil, 23}, {nil, 22}, {nil, 100},
		{[]store.Role{store.RoleUser, store.RoleReply}, 1},
		{[]store.Role{store.RoleUser, store.RoleReply}, 3},
		{[]store.Role{store.RoleUser, store.RoleReply}, 5},
		{[]store.Role{store.RoleUser}, 5}, // exactly 5 user messages: one full page, no more
		{[]store.Role{store.RoleTool}, 2},
	} {
		want := reversed(all, tc.roles...)
		var pages [][]*store.Message
		before := ""
		for range 100 {
			page, more, err := s.Messages(ctx, "c1", tc.roles, before, tc.limit)
			must(t, err)
			if len(page) > tc.limit {
				t.Fatalf("roles %v limit %d: page of %d", tc.roles, tc.limit, len(page))
			}
			pages = append(pages, page)
			n := 0
			for _, p := range pages {
				n += len(p)
			}
			if wantMore := n < len(want); more != wantMore {
				t.Errorf("roles %v limit %d page %d: more = %v, want %v", tc.roles, tc.limit, len(pages), more, wantMore)
			}
			if !more || len(page) == 0 {
				break
			}
			before = page[len(page)-1].ID
		}
		if d := cmp.Diff(want, slices.Concat(pages...), opts); d != "" {
			t.Errorf("roles %v limit %d: pages (-want +got):\n%s", tc.roles, tc.limit, d)
		}
	}

	// The cursor may be a message of a role that is filtered out.
	got, more, err := s.Messages(ctx, "c1", []store.Role{store.RoleUser}, all[7].ID, 100)
	must(t, err)
	if d := cmp.Diff(reversed(all[:7], store.RoleUser), got, opts); d != "" || more {
		t.Errorf("before a tool message: more %v, (-want +got):\n%s", more, d)
	}
	// Nothing is older than the first message.
	got, more, err = s.Messages(ctx, "c1", nil, all[0].ID, 10)
	must(t, err)
	if len(got) != 0 || more {
		t.Errorf("before the first message: %d messages, more %v", len(got), more)
	}
	// Only newer messages of other roles: more is false.
	got, more, err = s.Messages(ctx, "c1", []store.Role{store.RoleUser}, all[1].ID, 10)
	must(t, err)
	if len(got) != 1 || got[0].ID != all[0].ID || more {
		t.Errorf("before the second message: %d messages, more %v", len(got), more)
	}
}

func testMessagesErrors(t *testing.T, s store.Store) {
	ctx := context.Background()
	newConv(t, s, "c1")
	newConv(t, s, "c2")
	must(t, s.AppendMessages(ctx, history("c1", 0, 3)...))
	must(t, s.AppendMessages(ctx, history("c2", 0, 3)...))
	_, _, err := s.Messages(ctx, "c1", nil, "no-such-message", 10)
	wantNotFound(t, "Messages(unknown cursor)", err)
	_, _, err = s.Messages(ctx, "c1", nil, "c2-m01", 10)
	wantNotFound(t, "Messages(cursor of another conversation)", err)
	_, _, err = s.Messages(ctx, "nope", nil, "", 10)
	wantNotFound(t, "Messages(unknown conversation)", err)
	err = s.AppendMessages(ctx, &store.Message{ID: "x", ConversationID: "nope", Role: store.RoleUser})
	wantNotFound(t, "AppendMessages(unknown conversation)", err)
}

// StartTurn with first appends a conversation's first message, with its
// turn's record, while the conversation is as it was made, and writes
// nothing once it was touched.
func testStartFirstTurn(t *testing.T, s store.Store) {
	ctx := context.Background()
	first := func(c *store.Conversation, id string) bool {
		t.Helper()
		l := store.Lease{ParkID: "t-" + c.ID + "-" + id, Owner: "me", Until: at(60)}
		_, ok, err := s.StartTurn(ctx, &store.Message{ID: id, ConversationID: c.ID, Role: store.RoleUser, Text: "hi ✓", CreatedAt: at(1)},
			turnRecord(c.ID, l), c, nil)
		must(t, err)
		return ok
	}
	stored := func(conv string) []*store.Message {
		t.Helper()
		msgs, _, err := s.Messages(ctx, conv, nil, "", 10)
		must(t, err)
		return msgs
	}

	c := newConv(t, s, "c1")
	if !first(c, "m1") {
		t.Fatal("StartTurn(first) on a new conversation = false")
	}
	want := []*store.Message{{ID: "m1", ConversationID: "c1", Role: store.RoleUser, Text: "hi ✓", CreatedAt: at(1)}}
	if d := cmp.Diff(want, stored("c1"), opts); d != "" {
		t.Errorf("history after StartTurn(first) (-want +got):\n%s", d)
	}
	if first(c, "m2") {
		t.Error("a second StartTurn(first) = true")
	}
	bare := &store.Conversation{ID: "c2", CreatedAt: at(0)} // no supports: NULL, not []
	must(t, s.CreateConversation(ctx, bare))
	if !first(bare, "m1") {
		t.Error("StartTurn(first) on a new conversation without supports = false")
	}
	if first(&store.Conversation{ID: "nope"}, "m1") {
		t.Error("StartTurn(first) on an unknown conversation = true")
	}

	for name, touch := range map[string]func(id string) error{
		"a message": func(id string) error { return s.AppendMessages(ctx, history(id, 0, 1)...) },
		"a pending park": func(id string) error {
			_, err := s.SavePark(ctx, newPark(id, "p-"+id, time.Time{}), nil)
			return err
		},
		"other supports":     func(id string) error { return s.SetSupports(ctx, id, []string{"choices"}) },
		"supports cleared":   func(id string) error { return s.SetSupports(ctx, id, nil) },
		"another model step": func(id string) error { return s.SetModelPos(ctx, id, 4) },
	} {
		id := "touched-" + strings.ReplaceAll(name, " ", "-")
		c := newConv(t, s, id)
		must(t, touch(id))
		before := len(stored(id))
		if first(c, "m1") {
			t.Errorf("StartTurn(first) after %s = true", name)
		}
		if n := len(stored(id)); n != before {
			t.Errorf("StartTurn(first) after %s: %d messages, want %d", name, n, before)
		}
	}
}

// StartTurn stores a turn's message with its record, owed a reply under
// its lease, and refuses a second turn of the conversation while one is
// owed a reply, from any process: the running turn's, or that of a park
// an answer resumed. The record goes when the turn parks or ends, and a
// turn whose process died is taken over like any owed turn.
func testStartTurn(t *testing.T, s store.Store) {
	ctx := context.Background()
	newConv(t, s, "c1")
	start := func(msg, turn string, until time.Time) bool {
		t.Helper()
		l := store.Lease{ParkID: turn, Owner: "me", Until: until}
		_, ok, err := s.StartTurn(ctx, &store.Message{ID: msg, ConversationID: "c1", Role: store.RoleUser, Text: msg, CreatedAt: at(1)},
			turnRecord("c1", l), nil, nil)
		must(t, err)
		return ok
	}
	count := func() int {
		t.Helper()
		msgs, _, err := s.Messages(ctx, "c1", nil, "", 100)
		must(t, err)
		return len(msgs)
	}
	if !start("m1", "t1", at(60)) {
		t.Fatal("StartTurn on an idle conversation = false")
	}
	if start("m2", "t2", at(60)) || count() != 1 {
		t.Errorf("a second StartTurn while the first is owed: stored, %d messages", count())
	}
	// Its process died: the lease ran out, and the turn is still owed (to
	// be taken over), so no other turn starts.
	owed, err := s.OwedTurns(ctx, at(61), 10)
	must(t, err)
	if len(owed) != 1 || owed[0].ID != "t1" || owed[0].Type != store.ParkTurn || string(owed[0].Turn) != `{"requestId":"c1-r"}` {
		t.Fatalf("OwedTurns after the lease ran out = %v, want the record t1", owed)
	}
	owedTurn := func(when string, want string) {
		t.Helper()
		p, err := s.OwedTurn(ctx, "c1")
		switch {
		case want == "" && !errors.Is(err, store.ErrNotFound):
			t.Errorf("OwedTurn %s = %v, %v; want ErrNotFound", when, p, err)
		case want != "" && (err != nil || p.ID != want || !p.Owed):
			t.Errorf("OwedTurn %s = %v, %v; want the owed %s", when, p, err, want)
		}
	}
	owedTurn("after the lease ran out", "t1")
	if p, err := s.OwedTurn(ctx, "c1"); err == nil && string(p.Turn) != `{"requestId":"c1-r"}` {
		t.Errorf("OwedTurn's state = %s, want the record's", p.Turn)
	}
	if _, err := s.OwedTurn(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("OwedTurn of an unknown conversation = %v, want ErrNotFound", err)
	}
	if start("m2", "t2", at(120)) {
		t.Error("StartTurn while a turn waits to be taken over = true")
	}
	taken := store.Lease{ParkID: "t1", Owner: "other", Until: at(200)}
	if _, ok, err := s.ClaimTurn(ctx, taken, at(61)); err != nil || !ok {
		t.Fatalf("ClaimTurn of the record = %v, %v", ok, err)
	}
	must(t, s.SaveStep(ctx, taken, store.Step{Done: true, Messages: []*store.Message{
		{ID: "r1", ConversationID: "c1", Role: store.RoleReply, Text: "reply", CreatedAt: at(2)}}}))
	if owed, err := s.OwedTurns(ctx, at(1000), 10); err != nil || len(owed) != 0 {
		t.Errorf("OwedTurns after the turn ended = %v, %v; want none", owed, err)
	}
	owedTurn("after the turn ended", "")
	if parks, err := s.EndedParks(ctx, "c1", time.Time{}, "", 10); err != nil || len(parks) != 0 {
		t.Errorf("EndedParks lists a turn's record: %v, %v", parks, err)
	}
	if _, err := s.PendingPark(ctx, "c1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("PendingPark with only a turn's record = %v, want ErrNotFound", err)
	}

	// A turn that parks stops being owed: the next message may start a
	// turn (the server withdraws the card first, or refuses).
	if !start("m2", "t2", at(300)) {
		t.Fatal("StartTurn after the turn ended = false")
	}
	p := newPark("c1", "p2", at(400))
	if _, err := s.SavePark(ctx, p, &store.Lease{ParkID: "t2", Owner: "me", Until: at(300)}); err != nil {
		t.Fatal(err)
	}
	if owed, err := s.OwedTurns(ctx, at(1000), 10); err != nil || len(owed) != 0 {
		t.Errorf("OwedTurns after the turn parked = %v, %v; want none", owed, err)
	}
	owedTurn("after the turn parked", "")
	// The answer's take makes the park owe the reply: no turn starts.
	l := store.Lease{ParkID: "p2", Owner: "me", Until: at(500)}
	if _, ok, err := s.TakePark(ctx, "p2", store.Answer{State: store.ParkResolved, Lease: &l}); err != nil || !ok {
		t.Fatalf("TakePark = %v, %v", ok, err)
	}
	if start("m3", "t3", at(600)) {
		t.Error("StartTurn while a resumed turn is owed its reply = true")
	}
	owedTurn("while the resumed turn runs", "p2")
	must(t, s.SaveStep(ctx, l, store.Step{Done: true}))
	if !start("m3", "t3", at(600)) {
		t.Error("StartTurn after the resumed turn ended = false")
	}
	if _, ok, err := s.StartTurn(ctx, &store.Message{ID: "m", ConversationID: "nope", Role: store.RoleUser, CreatedAt: at(1)},
		turnRecord("nope", store.Lease{ParkID: "tn", Owner: "me", Until: at(60)}), nil, nil); err != nil || ok {
		t.Errorf("StartTurn of an unknown conversation = %v, %v; want false", ok, err)
	}
}

// StartTurn while a card waits asks waiting what becomes of it: refused,
// nothing is written; withdrawn, the card's take, its messages, the
// message and the turn's record are one write.
func testStartTurnWhileWaiting(t *testing.T, s store.Store) {
	ctx := context.Background()
	newConv(t, s, "c1")
	msgs := func() []string {
		t.Helper()
		ms, _, err := s.Messages(ctx, "c1", nil, "", 100)
		must(t, err)
		var ids []string
		for i := len(ms) - 1; i >= 0; i-- {
			ids = append(ids, ms[i].ID)
		}
		return ids
	}
	start := func(id string, waiting store.Waiting) (*store.Park, bool) {
		t.Helper()
		l := store.Lease{ParkID: "t-" + id, Owner: "me", Until: at(60)}
		w, ok, err := s.StartTurn(ctx, &store.Message{ID: id, ConversationID: "c1", Role: store.RoleUser, Text: id, CreatedAt: at(1)},
			turnRecord("c1", l), nil, waiting)
		must(t, err)
		if len(w) > 1 {
			t.Errorf("StartTurn withdrew %d parks, want at most 1", len(w))
		}
		if len(w) == 0 {
			return nil, ok
		}
		return w[0], ok
	}
	if _, ok := start("m1", nil); !ok {
		t.Fatal("StartTurn on an idle conversation = false")
	}
	if _, err := s.SavePark(ctx, newPark("c1", "p1", at(400)), &store.Lease{ParkID: "t-m1", Owner: "me", Until: at(60)}); err != nil {
		t.Fatal(err)
	}
	if _, ok := start("m2", nil); ok {
		t.Error("StartTurn with no waiting while a card waits = true")
	}
	var asked []string
	if _, ok := start("m2", func(p *store.Park) *store.Answer { asked = append(asked, p.ID); return nil }); ok {
		t.Error("StartTurn that waiting refused = true")
	}
	if d := cmp.Diff([]string{"p1"}, asked); d != "" {
		t.Errorf("waiting was asked about (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"m1"}, msgs()); d != "" {
		t.Errorf("a refused StartTurn wrote messages (-want +got):\n%s", d)
	}
	if _, err := s.PendingPark(ctx, "c1"); err != nil {
		t.Errorf("the card after a refused StartTurn: %v, want it pending", err)
	}

	withdraw := func(p *store.Park) *store.Answer {
		return &store.Answer{State: store.ParkCancelled, Outcome: json.RawMessage(`{"status":"withdrawn"}`),
			Messages: []*store.Message{{ID: "tool-" + p.ID, ConversationID: p.ConversationID, Role: store.RoleTool, Text: "withdrawn", CreatedAt: at(2)}}}
	}
	w, ok := start("m2", withdraw)
	if !ok || w == nil || w.ID != "p1" || w.State != store.ParkCancelled {
		t.Fatalf("StartTurn that withdraws = %+v, %v; want p1, cancelled, ok", w, ok)
	}
	if _, err := s.PendingPark(ctx, "c1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the card after it was withdrawn: %v, want ErrNotFound", err)
	}
	if d := cmp.Diff([]string{"m1", "tool-p1", "m2"}, msgs()); d != "" {
		t.Errorf("the history after a withdrawal (-want +got):\n%s", d)
	}
	ended, err := s.EndedParks(ctx, "c1", time.Time{}, "", 10)
	must(t, err)
	if len(ended) != 1 || ended[0].ID != "p1" || string(ended[0].Outcome) != `{"status":"withdrawn"}` {
		t.Errorf("EndedParks after a withdrawal = %+v, want p1 with its outcome", ended)
	}
	// The new turn is owed its reply: no third turn starts, whatever
	// waiting says.
	if _, ok := start("m3", withdraw); ok {
		t.Error("StartTurn while the new turn is owed = true")
	}
}

// A message that would withdraw a card races an answer that takes it:
// exactly one wins, in every process. When the answer wins, its resumed
// turn is owed and the message is refused; when the withdrawal wins, the
// answer finds nothing to take.
func testStartTurnRacesTake(t *testing.T, s store.Store) {
	ctx := context.Background()
	const rounds = 20
	for i := range rounds {
		conv := fmt.Sprintf("race-%d", i)
		newConv(t, s, conv)
		if _, err := s.SavePark(ctx, newPark(conv, conv+"-p", at(400)), nil); err != nil {
			t.Fatal(err)
		}
		var took, started bool
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			l := store.Lease{ParkID: conv + "-p", Owner: "answer", Until: at(60)}
			_, ok, err := s.TakePark(ctx, conv+"-p", store.Answer{State: store.ParkResolved, Lease: &l})
			if err != nil {
				t.Error(err)
			}
			took = ok
		}()
		go func() {
			defer wg.Done()
			l := store.Lease{ParkID: conv + "-t", Owner: "message", Until: at(60)}
			_, ok, err := s.StartTurn(ctx, &store.Message{ID: conv + "-m", ConversationID: conv, Role: store.RoleUser, CreatedAt: at(1)},
				turnRecord(conv, l), nil, func(*store.Park) *store.Answer { return &store.Answer{State: store.ParkCancelled} })
			if err != nil {
				t.Error(err)
			}
			started = ok
		}()
		wg.Wait()
		if took == started {
			t.Fatalf("round %d: the answer took the card: %v; the message started a turn: %v; want exactly one", i, took, started)
		}
		ms, _, err := s.Messages(ctx, conv, nil, "", 10)
		must(t, err)
		if want := map[bool]int{true: 1, false: 0}[started]; len(ms) != want {
			t.Errorf("round %d: %d messages stored, want %d", i, len(ms), want)
		}
	}
}

func newPark(conv, id string, deadline time.Time) *store.Park {
	return &store.Park{
		ID: id, Type: store.ParkInteraction, ConversationID: conv, SessionID: "s-" + conv,
		Kind:      "choices",
		Spec:      json.RawMessage(`{"question":"Pick one","options":[{"id":"a","label":"Ä"},{"id":"b","label":"B"}],"multi":false}`),
		Reason:    "to narrow it down",
		ToolCall:  store.ToolCall{ID: "call-" + id, Name: "raise_choices", Arguments: `{"question":"Pick one"}`},
		Deadline:  deadline,
		State:     store.ParkPending,
		CreatedAt: at(-3600),
		// The engine's state, which the store keeps as given, byte for
		// byte: not reformatted, not reordered.
		Turn: json.RawMessage(`{"v":1,  "requestId":"req-` + id + `","text":"Let me ask.\n","pending":[{"id":"call-next","name":"lookup"}],` +
			`"stashed":{"choices":"{}"},"citations":[{"id":"returns.md","snippet":"Returns — 30 days \u2028","score":2}],"z":null}`),
	}
}

func testParkRoundTrip(t *testing.T, s store.Store) {
	ctx := context.Background()
	newConv(t, s, "c1")
	newConv(t, s, "c2")
	_, err := s.PendingPark(ctx, "c1")
	wantNotFound(t, "PendingPark before any park", err)
	_, err = s.PendingPark(ctx, "nope")
	wantNotFound(t, "PendingPark(unknown conversation)", err)
	_, err = s.SavePark(ctx, newPark("nope", "p0", at(60)), nil)
	wantNotFound(t, "SavePark(unknown conversation)", err)

	want := newPark("c1", "p1", at(600))
	savePark(t, s, want)
	got, err := s.PendingPark(ctx, "c1")
	must(t, err)
	if d := cmp.Diff(want, got, opts); d != "" {
		t.Errorf("PendingPark (-want +got):\n%s", d)
	}
	_, err = s.PendingPark(ctx, "c2")
	wantNotFound(t, "PendingPark of another conversation", err)

	// A confirmation park with the least set.
	bare := &store.Park{ID: "p2", Type: store.ParkConfirmation, ConversationID: "c2", State: store.ParkPending,
		ToolCall: store.ToolCall{ID: "call-w", Name: "write_crm"}, Deadline: at(5)}
	savePark(t, s, bare)
	got, err = s.PendingPark(ctx, "c2")
	must(t, err)
	if d := cmp.Diff(bare, got, opts); d != "" {
		t.Errorf("PendingPark(minimal) (-want +got):\n%s", d)
	}

	taken, ok, err := s.TakePark(ctx, "p1", store.Answer{State: store.ParkResolved})
	must(t, err)
	if !ok {
		t.Fatal("TakePark(p1): ok = false")
	}
	want.State = store.ParkResolved
	if d := cmp.Diff(want, taken, opts); d != "" {
		t.Errorf("TakePark (-want +got):\n%s", d)
	}
	_, err = s.PendingPark(ctx, "c1")
	wantNotFound(t, "PendingPark after TakePark", err)
	if _, ok, err := s.TakePark(ctx, "p1", store.Answer{State: store.ParkExpired}); err != nil || ok {
		t.Errorf("second TakePark(p1) = ok %v, err %v; want false, nil", ok, err)
	}
	if _, ok, err := s.TakePark(ctx, "no-such-park", store.Answer{State: store.ParkResolved}); err != nil || ok {
		t.Errorf("TakePark(unknown) = ok %v, err %v; want false, nil", ok, err)
	}
	// The other conversation's park is untouched.
	if _, err := s.PendingPark(ctx, "c2"); err != nil {
		t.Errorf("PendingPark(c2) after taking c1's: %v", err)
	}

	// A new park after a taken one is the pending one again.
	again := newPark("c1", "p3", at(900))
	savePark(t, s, again)
	got, err = s.PendingPark(ctx, "c1")
	must(t, err)
	if d := cmp.Diff(again, got, opts); d != "" {
		t.Errorf("PendingPark after a new park (-want +got):\n%s", d)
	}
}

// testParkFromLease: a park saved from the lease of an owed turn, a turn's
// record (the turn's first park) or a resumed park (a later one), is
// stored as given, with its messages, and replaces the conversation's
// pending park; the turn is owed no reply any more, and its record is
// gone. (A store may make the record's row the park: nothing of the
// record may show in it.)
func testParkFromLease(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, from := range []string{"record", "resumed"} {
		t.Run(from, func(t *testing.T) {
			conv := "c-" + from
			newConv(t, s, conv)
			l := store.Lease{ParkID: conv + "-t", Owner: "A", Until: at(60)}
			if from == "record" {
				_, ok, err := s.StartTurn(ctx, &store.Message{ID: conv + "-m1", ConversationID: conv, Role: store.RoleUser, Text: "hi", CreatedAt: at(1)},
					turnRecord(conv, l), nil, nil)
				if err != nil || !ok {
					t.Fatalf("StartTurn = %v, %v", ok, err)
				}
			} else {
				savePark(t, s, newPark(conv, l.ParkID, at(600)))
				if _, ok, err := s.TakePark(ctx, l.ParkID, store.Answer{State: store.ParkResolved, Lease: &l}); err != nil || !ok {
					t.Fatalf("TakePark = %v, %v", ok, err)
				}
			}
			// A park that another turn saved meanwhile, without a lease.
			savePark(t, s, newPark(conv, conv+"-other", at(600)))
			want := newPark(conv, conv+"-p", at(900))
			want.CreatedAt, want.Addressee = at(5), "ann"
			raise := &store.Message{ID: conv + "-m2", ConversationID: conv, Role: store.RoleAssistant,
				ToolCalls: []store.ToolCall{want.ToolCall}, CreatedAt: at(5)}
			replaced, err := s.SavePark(ctx, want, &l, raise)
			if err != nil || replaced != conv+"-other" {
				t.Fatalf("SavePark from the %s's lease = %q, %v; want %s-other replaced", from, replaced, err, conv)
			}
			got, err := s.PendingParks(ctx, conv)
			must(t, err)
			if d := cmp.Diff([]*store.Park{want}, got, opts); d != "" {
				t.Errorf("PendingParks (-want +got):\n%s", d)
			}
			if p, err := s.OwedTurn(ctx, conv); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("OwedTurn after the park = %v, %v; want ErrNotFound", p, err)
			}
			if owed, err := s.OwedTurns(ctx, at(1000), 10); err != nil || len(owed) != 0 {
				t.Errorf("OwedTurns after the park = %v, %v; want none", ids(owed), err)
			}
			msgs, _, err := s.Messages(ctx, conv, []store.Role{store.RoleAssistant}, "", 10)
			must(t, err)
			if d := cmp.Diff([]*store.Message{raise}, msgs, opts); d != "" {
				t.Errorf("the raise (-want +got):\n%s", d)
			}
			if _, err := s.SavePark(ctx, newPark(conv, conv+"-q", at(900)), &l); !errors.Is(err, store.ErrLeaseLost) {
				t.Errorf("SavePark from the lease again = %v, want ErrLeaseLost", err)
			}
			if _, err := s.EndedPark(ctx, conv, l.ParkID); from == "record" && !errors.Is(err, store.ErrNotFound) {
				t.Errorf("EndedPark(the record) = %v, want ErrNotFound", err)
			}
		})
	}
}

// testParkReplaced: a conversation has at most one pending park; saving a
// new one replaces the old, which can no longer be taken.
// savePark saves p and fails the test on an error.
func savePark(t *testing.T, s store.Store, p *store.Park) {
	t.Helper()
	_, err := s.SavePark(context.Background(), p, nil)
	must(t, err)
}

func testParkReplaced(t *testing.T, s store.Store) {
	ctx := context.Background()
	newConv(t, s, "c1")
	if replaced, err := s.SavePark(ctx, newPark("c1", "old", at(-60)), nil); err != nil || replaced != "" {
		t.Errorf("first SavePark = %q, %v; want nothing replaced", replaced, err)
	}
	if replaced, err := s.SavePark(ctx, newPark("c1", "new", at(-30)), nil); err != nil || replaced != "old" {
		t.Errorf("second SavePark = %q, %v; want old replaced", replaced, err)
	}
	got, err := s.PendingPark(ctx, "c1")
	must(t, err)
	if got.ID != "new" {
		t.Errorf("PendingPark = %s, want new", got.ID)
	}
	expired, err := s.ExpiredParks(ctx, at(0), 10)
	must(t, err)
	if len(expired) != 1 || expired[0].ID != "new" {
		t.Errorf("ExpiredParks = %v, want only new", ids(expired))
	}
	if _, ok, err := s.TakePark(ctx, "old", store.Answer{State: store.ParkResolved}); err != nil || ok {
		t.Errorf("TakePark(replaced) = ok %v, err %v; want false, nil", ok, err)
	}
	if _, ok, err := s.TakePark(ctx, "new", store.Answer{State: store.ParkResolved}); err != nil || !ok {
		t.Errorf("TakePark(new) = ok %v, err %v; want true, nil", ok, err)
	}
}

// testParkWithMessages: the messages SavePark is given (the model step
// that raised the park) are stored in the park's write, in its
// conversation, or not at all.
func testParkWithMessages(t *testing.T, s store.Store) {
	ctx := context.Background()
	newConv(t, s, "c1")
	p := newPark("c1", "p1", at(600))
	step := &store.Message{ID: "m-raise", ConversationID: "c1", Role: store.RoleAssistant, Text: "Let me ask.",
		ToolCalls: []store.ToolCall{p.ToolCall}, CreatedAt: at(-3600)}
	if _, err := s.SavePark(ctx, p, nil, step); err != nil {
		t.Fatalf("SavePark with a message: %v", err)
	}
	if got, err := s.PendingPark(ctx, "c1"); err != nil || got.ID != "p1" {
		t.Errorf("PendingPark = %v, %v; want p1", got, err)
	}
	msgs, _, err := s.Messages(ctx, "c1", nil, "", 10)
	must(t, err)
	if d := cmp.Diff([]*store.Message{step}, msgs, opts); d != "" {
		t.Errorf("history after SavePark (-want +got):\n%s", d)
	}

	// A park whose conversation is missing stores nothing, not even
	// messages that name another conversation.
	lost := &store.Message{ID: "m-lost", ConversationID: "c1", Role: store.RoleAssistant, ToolCalls: []store.ToolCall{p.ToolCall}, CreatedAt: at(0)}
	_, err = s.SavePark(ctx, newPark("nope", "p0", at(600)), nil, lost)
	wantNotFound(t, "SavePark(unknown conversation) with a message", err)
	if got := roles(t, s, "c1"); !slices.Equal(got, []store.Role{store.RoleAssistant}) {
		t.Errorf("history after a refused save = %v, want the one raise", got)
	}

	// An owed turn that parks again: its step goes with the park under
	// the lease, and with a lease not held nothing is stored.
	newConv(t, s, "c2")
	savePark(t, s, newPark("c2", "q1", at(600)))
	l := store.Lease{ParkID: "q1", Owner: "A", Until: at(10)}
	if _, ok, err := s.TakePark(ctx, "q1", store.Answer{State: store.ParkResolved, Lease: &l,
		Messages: []*store.Message{toolResult(newPark("c2", "q1", at(600)), `{"status":"submitted"}`)}}); err != nil || !ok {
		t.Fatalf("TakePark(q1) = %v, %v", ok, err)
	}
	again := newPark("c2", "q2", at(600))
	raise := &store.Message{ID: "m-again", ConversationID: "c2", Role: store.RoleAssistant, ToolCalls: []store.ToolCall{again.ToolCall}, CreatedAt: at(2)}
	if _, err := s.SavePark(ctx, again, &store.Lease{ParkID: "q1", Owner: "B"}, raise); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("SavePark from a lease not held = %v, want ErrLeaseLost", err)
	}
	if got := roles(t, s, "c2"); !slices.Equal(got, []store.Role{store.RoleTool}) {
		t.Errorf("history after a save with a lost lease = %v, want only the answer", got)
	}
	if _, err := s.PendingPark(ctx, "c2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("PendingPark after a refused save = %v, want none", err)
	}
	if _, err := s.SavePark(ctx, again, &l, raise); err != nil {
		t.Fatalf("SavePark from the held lease with a message: %v", err)
	}
	if got := roles(t, s, "c2"); !slices.Equal(got, []store.Role{store.RoleTool, store.RoleAssistant}) {
		t.Errorf("history after parking again = %v, want the answer, then the raise", got)
	}
	if owed, err := s.OwedTurns(ctx, at(1000), 10); err != nil || len(owed) != 0 {
		t.Errorf("OwedTurns after parking again = %v, %v; want none", ids(owed), err)
	}
}

func testTakeParkOnce(t *testing.T, s store.Store) {
	ctx := context.Background()
	newConv(t, s, "c1")
	for round := range 3 {
		id := fmt.Sprintf("p%d", round)
		savePark(t, s, newPark("c1", id, time.Now().Add(time.Minute)))
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			oks  int
			errs []error
		)
		start := make(chan struct{})
		states := []store.ParkState{store.ParkResolved, store.ParkExpired, store.ParkCancelled, store.ParkReplaced}
		for i := range 20 {
			wg.Go(func() {
				<-start
				p, ok, err := s.TakePark(ctx, id, store.Answer{State: states[i%len(states)]})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
				}
				if ok {
					oks++
					if p == nil || p.ID != id || p.State != states[i%len(states)] {
						errs = append(errs, fmt.Errorf("taken park = %+v", p))
					}
				}
			})
		}
		close(start)
		wg.Wait()
		if oks != 1 || len(errs) > 0 {
			t.Errorf("round %d: 20 concurrent TakePark: %d ok, errors %v; want exactly 1 ok", round, oks, errs)
		}
		_, err := s.PendingPark(ctx, "c1")
		wantNotFound(t, "PendingPark after TakePark", err)
	}
}

func ids(ps []*store.Park) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.ID)
	}
	slices.Sort(out)
	return out
}

func testExpiredParks(t *testing.T, s store.Store) {
	ctx := context.Background()
	now := at(0)
	for _, c := range []string{"past1", "past2", "future", "exact", "taken", "nothing"} {
		newConv(t, s, c)
	}
	got, err := s.ExpiredParks(ctx, now, 10)
	must(t, err)
	if len(got) != 0 {
		t.Errorf("ExpiredParks with no parks = %v", ids(got))
	}
	p1 := newPark("past1", "p-past1", now.Add(-time.Hour))
	p2 := newPark("past2", "p-past2", now.Add(-time.Microsecond))
	savePark(t, s, p1)
	savePark(t, s, p2)
	savePark(t, s, newPark("future", "p-future", now.Add(time.Microsecond)))
	savePark(t, s, newPark("exact", "p-exact", now)) // not before now
	savePark(t, s, newPark("taken", "p-taken", now.Add(-2*time.Hour)))
	if _, ok, err := s.TakePark(ctx, "p-taken", store.Answer{State: store.ParkCancelled}); err != nil || !ok {
		t.Fatalf("TakePark(p-taken) = %v, %v", ok, err)
	}
	got, err = s.ExpiredParks(ctx, now, 10)
	must(t, err)
	if d := cmp.Diff([]*store.Park{p1, p2}, got, opts); d != "" {
		t.Errorf("ExpiredParks (-want +got):\n%s", d)
	}
	got, err = s.ExpiredParks(ctx, now.Add(2*time.Hour), 10)
	must(t, err)
	if want := []string{"p-past1", "p-past2", "p-exact", "p-future"}; !slices.Equal(unsorted(got), want) {
		t.Errorf("ExpiredParks(now+2h) = %v, want %v (earliest deadline first)", unsorted(got), want)
	}
	// The limit keeps the earliest: a sweep's batch.
	for limit, want := range [][]string{nil, {"p-past1"}, {"p-past1", "p-past2"}, {"p-past1", "p-past2", "p-exact"}} {
		got, err = s.ExpiredParks(ctx, now.Add(2*time.Hour), limit)
		must(t, err)
		if !slices.Equal(unsorted(got), want) {
			t.Errorf("ExpiredParks(now+2h, limit %d) = %v, want %v", limit, unsorted(got), want)
		}
	}
	// Listing does not take.
	if _, ok, err := s.TakePark(ctx, "p-past1", store.Answer{State: store.ParkExpired}); err != nil || !ok {
		t.Errorf("TakePark(p-past1) after listing = %v, %v", ok, err)
	}
	got, err = s.ExpiredParks(ctx, now, 10)
	must(t, err)
	if want := []string{"p-past2"}; !slices.Equal(ids(got), want) {
		t.Errorf("ExpiredParks after a take = %v, want %v", ids(got), want)
	}
	// A park without a deadline is due, before any with one.
	savePark(t, s, newPark("nothing", "p-none", time.Time{}))
	got, err = s.ExpiredParks(ctx, now, 1)
	must(t, err)
	if want := []string{"p-none"}; !slices.Equal(unsorted(got), want) {
		t.Errorf("ExpiredParks(limit 1) with a park without a deadline = %v, want %v", unsorted(got), want)
	}
}

// unsorted is the parks' ids in the order the store gave them.
func unsorted(ps []*store.Park) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.ID)
	}
	return out
}

// testNoAliases: a store keeps its own copies; neither the records handed
// in nor those handed out share memory with it.
func testNoAliases(t *testing.T, s store.Store) {
	ctx := context.Background()

	c := newConv(t, s, "c1")
	c.Supports[0], c.Owner = "mutated", "mutated"
	got, err := s.Conversation(ctx, "c1")
	must(t, err)
	got.Supports[1] = "mutated"
	got, err = s.Conversation(ctx, "c1")
	must(t, err)
	if !slices.Equal(got.Supports, []string{"choices", "identity_intake"}) || got.Owner != "owner-c1" {
		t.Errorf("conversation shares memory: Supports %q, Owner %q", got.Supports, got.Owner)
	}
	sup := []string{"x", "y"}
	must(t, s.SetSupports(ctx, "c1", sup))
	sup[0] = "mutated"
	got, err = s.Conversation(ctx, "c1")
	must(t, err)
	if !slices.Equal(got.Supports, []string{"x", "y"}) {
		t.Errorf("SetSupports keeps the caller's slice: %q", got.Supports)
	}

	sess := &store.Session{ID: "s1", ConversationID: "c1", UserName: "Ann"}
	must(t, s.CreateSession(ctx, sess))
	sess.UserName = "mutated"
	gs, err := s.Session(ctx, "s1")
	must(t, err)
	gs.UserName = "mutated"
	gs, err = s.Session(ctx, "s1")
	must(t, err)
	if gs.UserName != "Ann" {
		t.Errorf("session shares memory: UserName %q", gs.UserName)
	}

	msgs := history("c1", 0, 5)
	want := history("c1", 0, 5)
	must(t, s.AppendMessages(ctx, msgs...))
	for _, m := range msgs {
		m.Text = "mutated"
		for i := range m.ToolCalls {
			m.ToolCalls[i].Name = "mutated"
		}
	}
	gm, _, err := s.Messages(ctx, "c1", nil, "", 10)
	must(t, err)
	for _, m := range gm {
		m.Text = "mutated"
		for i := range m.ToolCalls {
			m.ToolCalls[i].Arguments = "mutated"
		}
	}
	gm, _, err = s.Messages(ctx, "c1", nil, "", 10)
	must(t, err)
	if d := cmp.Diff(reversed(want), gm, opts); d != "" {
		t.Errorf("messages share memory (-want +got):\n%s", d)
	}

	p := newPark("c1", "p1", at(-10))
	savePark(t, s, p)
	mutatePark(p)
	gp, err := s.PendingPark(ctx, "c1")
	must(t, err)
	mutatePark(gp)
	ex, err := s.ExpiredParks(ctx, at(0), 10)
	must(t, err)
	for _, p := range ex {
		mutatePark(p)
	}
	gp, err = s.PendingPark(ctx, "c1")
	must(t, err)
	if d := cmp.Diff(newPark("c1", "p1", at(-10)), gp, opts); d != "" {
		t.Errorf("park shares memory (-want +got):\n%s", d)
	}
}

func mutatePark(p *store.Park) {
	for i := range p.Spec {
		p.Spec[i] = ' '
	}
	p.Reason = "mutated"
	for i := range p.Turn {
		p.Turn[i] = ' '
	}
}

// toolResult is the answer message of park p.
func toolResult(p *store.Park, text string) *store.Message {
	return &store.Message{ID: "m-" + p.ID, ConversationID: p.ConversationID, Role: store.RoleTool, Text: text,
		ToolCallID: p.ToolCall.ID, ToolName: p.ToolCall.Name, CreatedAt: at(1)}
}

// roles lists the roles of the conversation's messages, oldest first.
func roles(t *testing.T, s store.Store, conv string) []store.Role {
	t.Helper()
	msgs, _, err := s.Messages(context.Background(), conv, nil, "", 100)
	must(t, err)
	var out []store.Role
	for _, m := range slices.Backward(msgs) {
		out = append(out, m.Role)
	}
	return out
}

// testTakeStoresAnswer: the take and its answer are one write. A take that
// loses the race stores nothing; the winner's answer is in the history and
// its turn is owed under its lease.
func testTakeStoresAnswer(t *testing.T, s store.Store) {
	ctx := context.Background()
	newConv(t, s, "c1")
	p := newPark("c1", "p1", at(600))
	savePark(t, s, p)
	turn := json.RawMessage(`{"requestId":"req-p1","text":"Let me ask.\n"}`)
	lease := store.Lease{ParkID: "p1", Owner: "A", Until: at(30)}
	var (
		wg  sync.WaitGroup
		oks atomic.Int32
	)
	for i := range 10 {
		wg.Go(func() {
			a := store.Answer{State: store.ParkResolved, Turn: turn, Lease: &lease,
				Messages: []*store.Message{toolResult(p, `{"status":"submitted"}`)}}
			a.Messages[0].ID += strconv.Itoa(i)
			taken, ok, err := s.TakePark(ctx, "p1", a)
			if err != nil {
				t.Errorf("TakePark: %v", err)
			}
			if ok {
				oks.Add(1)
				if !taken.Owed || taken.LeaseOwner != "A" || !taken.LeaseUntil.Equal(at(30)) || string(taken.Turn) != string(turn) {
					t.Errorf("taken park: owed %v, lease %q until %v, turn %s", taken.Owed, taken.LeaseOwner, taken.LeaseUntil, taken.Turn)
				}
			}
		})
	}
	wg.Wait()
	if oks.Load() != 1 {
		t.Fatalf("10 concurrent takes: %d ok, want 1", oks.Load())
	}
	if got := roles(t, s, "c1"); !slices.Equal(got, []store.Role{store.RoleTool}) {
		t.Errorf("history after the take = %v, want exactly the one answer", got)
	}
	owed, err := s.OwedTurns(ctx, at(31), 10)
	must(t, err)
	if len(owed) != 1 || owed[0].ID != "p1" {
		t.Errorf("OwedTurns after the lease = %v, want p1", ids(owed))
	}
	if owed, err := s.OwedTurns(ctx, at(29), 10); err != nil || len(owed) != 0 {
		t.Errorf("OwedTurns while the lease holds = %v, %v; want none", ids(owed), err)
	}

	// A take that ends the turn (cancel) owes nothing.
	newConv(t, s, "c2")
	savePark(t, s, newPark("c2", "p2", at(600)))
	if _, ok, err := s.TakePark(ctx, "p2", store.Answer{State: store.ParkCancelled}); err != nil || !ok {
		t.Fatalf("TakePark(cancel) = %v, %v", ok, err)
	}
	if owed, err := s.OwedTurns(ctx, at(1000), 10); err != nil || len(owed) != 1 {
		t.Errorf("OwedTurns after a cancel = %v, %v; want only p1", ids(owed), err)
	}
}

// testEndedParks: a take's outcome is kept with the park, and a
// conversation's parks that ended with one are listed in the order saved,
// from a time on; pending parks, replaced ones and ones that ended
// without an outcome are not.
func testEndedParks(t *testing.T, s store.Store) {
	ctx := context.Background()
	newConv(t, s, "c1")
	newConv(t, s, "c2")
	take := func(p *store.Park, a store.Answer) *store.Park {
		t.Helper()
		savePark(t, s, p)
		taken, ok, err := s.TakePark(ctx, p.ID, a)
		must(t, err)
		if !ok {
			t.Fatalf("TakePark(%s): not taken", p.ID)
		}
		return taken
	}
	at1 := func(id string, sec int) *store.Park {
		p := newPark("c1", id, at(600))
		p.CreatedAt = at(sec)
		return p
	}
	submitted := json.RawMessage(`{"status":"submitted","values":{"choice":"a"}}`)
	record := json.RawMessage(`{"by":"ada","via":"card"}`)
	first := take(at1("p1", 10), store.Answer{State: store.ParkResolved, Outcome: submitted, Record: record,
		Lease: &store.Lease{ParkID: "p1", Owner: "A", Until: at(30)}})
	if !jsonEqual(first.Outcome, submitted) {
		t.Errorf("taken park's outcome = %s, want %s", first.Outcome, submitted)
	}
	savePark(t, s, at1("p2", 20)) // replaced by p3: no outcome
	take(at1("p3", 30), store.Answer{State: store.ParkCancelled, Outcome: json.RawMessage(`{"status":"cancelled"}`)})
	take(at1("p0", 30), store.Answer{State: store.ParkExpired, Outcome: json.RawMessage(`{"status":"no_response"}`)})
	take(at1("p4", 35), store.Answer{State: store.ParkResolved}) // a fallback directive: no outcome
	savePark(t, s, at1("p5", 40))                                // pending
	other := newPark("c2", "p6", at(600))
	other.CreatedAt = at(50)
	take(other, store.Answer{State: store.ParkResolved, Outcome: submitted})

	var marks []*store.Message // messages to bound the list by
	for _, sec := range []int{20, 30, 60} {
		marks = append(marks, &store.Message{ID: "m" + strconv.Itoa(sec), ConversationID: "c1", Role: store.RoleUser, CreatedAt: at(sec)})
	}
	must(t, s.AppendMessages(ctx, marks...))

	got, err := s.EndedParks(ctx, "c1", time.Time{}, "", 10)
	must(t, err)
	if want := []string{"p1", "p0", "p3"}; !slices.Equal(unsorted(got), want) {
		t.Fatalf("EndedParks(c1) = %v, want %v (by time saved, ties by id)", unsorted(got), want)
	}
	want := at1("p1", 10)
	want.State, want.Outcome, want.Record = store.ParkResolved, submitted, record
	want.Owed, want.LeaseOwner, want.LeaseUntil = true, "A", at(30)
	if d := cmp.Diff(want, got[0], opts); d != "" {
		t.Errorf("ended park (-want +got):\n%s", d)
	}
	if got[1].State != store.ParkExpired || !jsonEqual(got[1].Outcome, json.RawMessage(`{"status":"no_response"}`)) || got[1].Record != nil {
		t.Errorf("ended park p0: state %s, outcome %s, record %s", got[1].State, got[1].Outcome, got[1].Record)
	}
	// One by its id, as a late answer looks it up.
	if p, err := s.EndedPark(ctx, "c1", "p1"); err != nil || cmp.Diff(want, p, opts) != "" {
		t.Errorf("EndedPark(c1, p1) = %+v, %v; want %+v", p, err, want)
	}
	for _, tc := range []struct{ conv, id, why string }{
		{"c1", "p5", "pending"}, {"c1", "p2", "replaced, with no outcome"}, {"c2", "p1", "another conversation's"},
		{"c1", "nope", "unknown"}, {"nope", "p1", "of an unknown conversation"}} {
		if p, err := s.EndedPark(ctx, tc.conv, tc.id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("EndedPark(%s, %s), %s = %+v, %v; want ErrNotFound", tc.conv, tc.id, tc.why, p, err)
		}
	}
	for _, tc := range []struct {
		conv   string
		since  time.Time
		before string
		limit  int
		want   []string
	}{
		{"c1", at(11), "", 10, []string{"p0", "p3"}},
		{"c1", at(30), "", 10, []string{"p0", "p3"}}, // since is inclusive
		{"c1", at(31), "", 10, nil},
		{"c1", time.Time{}, "", 1, []string{"p1"}},
		{"c1", time.Time{}, "", 0, nil},
		{"c1", time.Time{}, "m60", 10, []string{"p1", "p0", "p3"}},
		{"c1", time.Time{}, "m30", 10, []string{"p1"}}, // before is exclusive
		{"c1", at(11), "m20", 10, nil},
		{"c1", time.Time{}, "m-unknown", 10, nil},
		{"c2", time.Time{}, "", 10, []string{"p6"}},
		{"c2", time.Time{}, "m60", 10, nil}, // another conversation's message
		{"nope", time.Time{}, "", 10, nil},
	} {
		got, err := s.EndedParks(ctx, tc.conv, tc.since, tc.before, tc.limit)
		if err != nil || !slices.Equal(unsorted(got), tc.want) {
			t.Errorf("EndedParks(%s, %v, %q, %d) = %v, %v; want %v", tc.conv, tc.since, tc.before, tc.limit, unsorted(got), err, tc.want)
		}
	}
}

// testOwedTurnLease: only the lease's holder writes steps; a claim takes an
// expired lease over exactly once; the last step ends what is owed.
func testOwedTurnLease(t *testing.T, s store.Store) {
	ctx := context.Background()
	newConv(t, s, "c1")
	p := newPark("c1", "p1", at(600))
	savePark(t, s, p)
	a := store.Lease{ParkID: "p1", Owner: "A", Until: at(10)}
	if _, ok, err := s.TakePark(ctx, "p1", store.Answer{State: store.ParkExpired, Lease: &a,
		Messages: []*store.Message{toolResult(p, `{"status":"no_response"}`)}}); err != nil || !ok {
		t.Fatalf("TakePark = %v, %v", ok, err)
	}
	if _, ok, err := s.ClaimTurn(ctx, store.Lease{ParkID: "p1", Owner: "B", Until: at(30)}, at(5)); err != nil || ok {
		t.Errorf("ClaimTurn while A's lease holds = %v, %v; want false", ok, err)
	}
	pos := 3
	step := store.Step{Turn: json.RawMessage(`{"requestId":"r","text":"thinking"}`), ModelPos: &pos,
		Messages: []*store.Message{{ID: "m-a1", ConversationID: "c1", Role: store.RoleAssistant, Text: "thinking", CreatedAt: at(2)}}}
	must(t, s.SaveStep(ctx, a, step))
	if err := s.RenewLease(ctx, store.Lease{ParkID: "p1", Owner: "A", Until: at(20)}); err != nil {
		t.Errorf("RenewLease by the holder: %v", err)
	}
	if err := s.RenewLease(ctx, store.Lease{ParkID: "p1", Owner: "B", Until: at(40)}); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("RenewLease by another = %v, want ErrLeaseLost", err)
	}

	// A dies; at 25 B takes over, with the step A stored.
	var wg sync.WaitGroup
	var wins atomic.Int32
	var claimed *store.Park
	for i := range 5 {
		wg.Go(func() {
			p, ok, err := s.ClaimTurn(ctx, store.Lease{ParkID: "p1", Owner: "B" + strconv.Itoa(i), Until: at(60)}, at(25))
			if err != nil {
				t.Errorf("ClaimTurn: %v", err)
			}
			if ok {
				wins.Add(1)
				claimed = p
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("5 concurrent claims: %d won, want 1", wins.Load())
	}
	if string(claimed.Turn) != string(step.Turn) || !claimed.Owed {
		t.Errorf("claimed turn = %s, want A's last step", claimed.Turn)
	}
	conv, err := s.Conversation(ctx, "c1")
	must(t, err)
	if conv.ModelPos != 3 {
		t.Errorf("model position = %d, want the step's 3", conv.ModelPos)
	}
	if err := s.SaveStep(ctx, a, step); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("SaveStep by A after the takeover = %v, want ErrLeaseLost", err)
	}
	b := store.Lease{ParkID: "p1", Owner: claimed.LeaseOwner, Until: at(70)}
	must(t, s.SaveStep(ctx, b, store.Step{Turn: claimed.Turn, Done: true,
		Messages: []*store.Message{{ID: "m-r", ConversationID: "c1", Role: store.RoleReply, Text: "done", CreatedAt: at(3)}}}))
	if got := roles(t, s, "c1"); !slices.Equal(got, []store.Role{store.RoleTool, store.RoleAssistant, store.RoleReply}) {
		t.Errorf("history = %v; A's rejected step must not be stored", got)
	}
	if owed, err := s.OwedTurns(ctx, at(1000), 10); err != nil || len(owed) != 0 {
		t.Errorf("OwedTurns after the last step = %v, %v; want none", ids(owed), err)
	}
	if err := s.SaveStep(ctx, b, store.Step{}); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("SaveStep after Done = %v, want ErrLeaseLost", err)
	}

	// An owed turn that parks again stops being owed in the same write.
	newConv(t, s, "c2")
	savePark(t, s, newPark("c2", "q1", at(600)))
	l := store.Lease{ParkID: "q1", Owner: "A", Until: at(10)}
	if _, ok, err := s.TakePark(ctx, "q1", store.Answer{State: store.ParkResolved, Lease: &l}); err != nil || !ok {
		t.Fatalf("TakePark(q1) = %v, %v", ok, err)
	}
	if _, err := s.SavePark(ctx, newPark("c2", "q2", at(600)), &store.Lease{ParkID: "q1", Owner: "B"}); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("SavePark from a lease not held = %v, want ErrLeaseLost", err)
	}
	if _, err := s.PendingPark(ctx, "c2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("PendingPark after a refused save = %v, want none", err)
	}
	if _, err := s.SavePark(ctx, newPark("c2", "q2", at(600)), &l); err != nil {
		t.Fatalf("SavePark from the held lease: %v", err)
	}
	if owed, err := s.OwedTurns(ctx, at(1000), 10); err != nil || len(owed) != 0 {
		t.Errorf("OwedTurns after parking again = %v, %v; want none", ids(owed), err)
	}
}

// testNUL: every store keeps U+0000 in text as U+FFFD (PostgreSQL cannot
// hold it in text), so a NUL from outside never fails a write.
func testNUL(t *testing.T, s store.Store) {
	ctx := context.Background()
	must(t, s.Ping(ctx))
	must(t, s.CreateConversation(ctx, &store.Conversation{ID: "c1", Owner: "al\x00ice", CreatedAt: at(0)}))
	must(t, s.CreateSession(ctx, &store.Session{ID: "s1", ConversationID: "c1", UserName: "Ada\x00"}))
	must(t, s.SetContact(ctx, "s1", "", "a\x00@example.com", ""))
	must(t, s.AppendMessages(ctx, &store.Message{ID: "m1", ConversationID: "c1", Role: store.RoleUser, Text: "hi\x00there", CreatedAt: at(1)}))
	p := newPark("c1", "p1", at(60))
	p.Reason = "to\x00know"
	savePark(t, s, p)

	conv, err := s.Conversation(ctx, "c1")
	must(t, err)
	sess, err := s.Session(ctx, "s1")
	must(t, err)
	msgs, _, err := s.Messages(ctx, "c1", nil, "", 10)
	must(t, err)
	park, err := s.PendingPark(ctx, "c1")
	must(t, err)
	for what, got := range map[string][2]string{
		"owner":   {conv.Owner, "al\uFFFDice"},
		"name":    {sess.UserName, "Ada\uFFFD"},
		"email":   {sess.ContactEmail, "a\uFFFD@example.com"},
		"message": {msgs[0].Text, "hi\uFFFDthere"},
		"reason":  {park.Reason, "to\uFFFDknow"},
	} {
		if got[0] != got[1] {
			t.Errorf("%s = %q, want %q", what, got[0], got[1])
		}
	}
}
