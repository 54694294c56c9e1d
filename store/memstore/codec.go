package memstore

import (
	"encoding/binary"
	"encoding/json"
	"time"

	"github.com/kindkit/kindkit/store"
)

// What a conversation keeps (its messages, its sessions, its ended parks)
// is kept encoded in byte slices rather than as structs of strings. The
// garbage collector marks a byte slice without reading it, but reads every
// pointer of every live struct at every cycle. Kept as structs, a
// finished conversation of storetest's cycle was 18 heap objects and
// 1,403 scannable bytes (TestRetainedScan); encoded, it is 7 objects and
// 411 bytes. Marking the retained conversations was most of the
// collector's work under load: kindserver's GC CPU a cycle (gctrace, the
// memory store with load.sh's 5 s retention, c=50) fell to less than
// half. Encoding copies the strings the structs shared: BenchmarkCycle
// allocates 4 KB a cycle more. Reading decodes, as it cloned before.
//
// The encoding is this package's own and never leaves the process: a
// string is its length (uvarint) and bytes, an integer a varint, a time
// its Unix seconds and nanoseconds (it comes back in UTC, as from the SQL
// stores).

func putString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func putInt(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

func putBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func putTime(b []byte, t time.Time) []byte {
	return putInt(putInt(b, t.Unix()), int64(t.Nanosecond()))
}

// reader reads what the put functions wrote, in the same order. It trusts
// its input: only this package writes it.
type reader struct{ b []byte }

func (r *reader) bytes() []byte {
	n := int(r.uint())
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) string() string { return string(r.bytes()) }

func (r *reader) uint() uint64 {
	v, k := binary.Uvarint(r.b)
	r.b = r.b[k:]
	return v
}

func (r *reader) int() int64 {
	v, k := binary.Varint(r.b)
	r.b = r.b[k:]
	return v
}

func (r *reader) bool() bool {
	v := r.b[0] == 1
	r.b = r.b[1:]
	return v
}

func (r *reader) time() time.Time {
	sec := r.int()
	return time.Unix(sec, r.int()).UTC()
}

// appendMessage encodes m, less its conversation id (its conversation's).
func appendMessage(b []byte, m *store.Message) []byte {
	b = putString(b, m.ID)
	b = putString(b, string(m.Role))
	b = putString(b, store.Text(m.Text))
	b = binary.AppendUvarint(b, uint64(len(m.ToolCalls)))
	for _, tc := range m.ToolCalls {
		b = putToolCall(b, tc)
	}
	b = putString(b, store.Text(m.ToolCallID))
	b = putString(b, store.Text(m.ToolName))
	b = putBool(b, m.IsError)
	return putTime(b, m.CreatedAt)
}

func readMessage(b []byte, conv string) *store.Message {
	r := reader{b}
	m := &store.Message{ID: r.string(), ConversationID: conv, Role: store.Role(r.string()), Text: r.string()}
	for range r.uint() {
		m.ToolCalls = append(m.ToolCalls, r.toolCall())
	}
	m.ToolCallID, m.ToolName, m.IsError, m.CreatedAt = r.string(), r.string(), r.bool(), r.time()
	return m
}

// messageID reads only the id of an encoded message, without a copy.
func messageID(b []byte) []byte { return (&reader{b}).bytes() }

func putToolCall(b []byte, tc store.ToolCall) []byte {
	return putString(putString(putString(b, tc.ID), tc.Name), tc.Arguments)
}

func (r *reader) toolCall() store.ToolCall {
	return store.ToolCall{ID: r.string(), Name: r.string(), Arguments: r.string()}
}

func appendSession(b []byte, s *store.Session) []byte {
	for _, f := range [...]string{s.ID, s.ConversationID, s.AgentID, s.AgentName, s.UserName, s.ContactEmail, s.ContactPhone, s.UserParticipantID, s.AgentParticipantID} {
		b = putString(b, f)
	}
	return b
}

func readSession(b []byte) *store.Session {
	r := reader{b}
	return &store.Session{
		ID: r.string(), ConversationID: r.string(), AgentID: r.string(), AgentName: r.string(),
		UserName: r.string(), ContactEmail: r.string(), ContactPhone: r.string(),
		UserParticipantID: r.string(), AgentParticipantID: r.string(),
	}
}

// appendPark encodes p; its turn state as the engine gave it.
func appendPark(b []byte, p *store.Park) []byte {
	for _, f := range [...]string{p.ID, string(p.Type), p.ConversationID, p.SessionID, p.Kind, string(p.Spec), p.Reason} {
		b = putString(b, f)
	}
	b = putToolCall(b, p.ToolCall)
	b = putTime(b, p.Deadline)
	b = putString(b, string(p.State))
	b = putString(b, string(p.Turn))
	b = putBool(b, p.Owed)
	b = putString(b, p.LeaseOwner)
	b = putTime(b, p.LeaseUntil)
	b = putTime(b, p.CreatedAt)
	b = putBool(b, p.Spec != nil)
	b = putBool(b, p.Outcome != nil)
	b = putString(b, string(p.Outcome))
	b = putBool(b, p.Record != nil)
	b = putString(b, string(p.Record))
	b = putString(b, p.Group)
	return putString(b, p.Addressee)
}

func readPark(b []byte) (*store.Park, error) {
	r := reader{b}
	p := &store.Park{ID: r.string(), Type: store.ParkKind(r.string()), ConversationID: r.string(), SessionID: r.string(), Kind: r.string()}
	spec := r.bytes()
	p.Reason = r.string()
	p.ToolCall = r.toolCall()
	p.Deadline = r.time()
	p.State = store.ParkState(r.string())
	if turn := r.bytes(); len(turn) > 0 {
		p.Turn = append(json.RawMessage{}, turn...)
	}
	p.Owed, p.LeaseOwner, p.LeaseUntil, p.CreatedAt = r.bool(), r.string(), r.time(), r.time()
	if r.bool() {
		p.Spec = append(json.RawMessage{}, spec...)
	}
	if has, outcome := r.bool(), r.bytes(); has {
		p.Outcome = append(json.RawMessage{}, outcome...)
	}
	if has, record := r.bool(), r.bytes(); has {
		p.Record = append(json.RawMessage{}, record...)
	}
	p.Group = r.string()
	p.Addressee = r.string()
	return p, nil
}
