package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	textmessage "golang.org/x/text/message"

	"github.com/kindkit/kindkit/server"
)

// referenceSpec holds the reference protocol's JSON Schemas, which its
// clients generate their types from. It is read in place, never copied.
const referenceSpec = "../../shared/reference/spec"

// The wire gate. TestMain has it see every frame that every server of this
// package's tests sends (the whole scenario corpus and every protocol
// test), and checks each against the reference schemas:
//   - the envelope (envelope.schema.json, EventEnvelope),
//   - its event's schema (events/<type>.schema.json): a type without one
//     is not a reference frame,
//   - for an immediate_response with status 200, the Response of the
//     action it answers (actions/<action>.schema.json#/$defs/Response),
//     when the reference defines one.
//
// A connection that asked for no extension gets exactly the reference
// frames, with only the allowances below; one that asked for an extension
// may get that extension's additions, and nothing else beyond them. Any
// other difference fails the package's tests.
//
// The gate also checks the ids the server mints (mintedIDs): a new
// session's and conversation's, a new card's interactionId, a new message's
// id. Each is a key of the store, and must be a UUIDv7 (store.NewID), so
// that the store's indexes grow at their end; a random UUIDv4 fails it.

// allowance is one difference from the reference schemas that the gate lets
// pass, either because the reference servers themselves send it (source
// names where), or because the connection asked for the extension ext.
type allowance struct {
	name   string
	source string
	ext    string // the extension that allows it; "" for every client
	// allows tells whether a difference found is this allowance's.
	allows func(at found) bool
}

// allowances is every difference the gate lets pass; nothing else is
// allowed.
var allowances = []allowance{
	{
		name: "event type cancelled, which the envelope's type enum lacks (events/cancelled.schema.json defines the event)",
		source: "the reference servers answer cancel with it (SmooAI/smooth-operator at 3e73407: the Go server's cancelled, " +
			"go/server/protocol.go:310, sent by handleCancel, go/server/dispatcher.go:182; the Rust server's, " +
			"rust/smooth-operator-server/src/protocol.rs:433, sent by handle_text_frame, src/server.rs:926); " +
			"the reference scenario cancel-mid-turn.json expects it",
		allows: func(at found) bool {
			_, isEnum := at.err.ErrorKind.(*kind.Enum)
			return at.schema == "envelope.schema.json" && isEnum && slices.Equal(at.err.InstanceLocation, []string{"type"}) &&
				at.frame["type"] == "cancelled"
		},
	},
	{
		name: "a value the reference requires as a uuid, echoed as a client sent it (agentId)",
		source: "the reference servers echo agentId unchecked (PROTOCOL.md §2.2: Go does not check that it is a UUID); " +
			"these tests send agentIds such as \"a\"",
		allows: func(at found) bool {
			_, isFormat := at.err.ErrorKind.(*kind.Format)
			loc := at.err.InstanceLocation
			return isFormat && len(loc) == 1 && loc[0] == "agentId" && at.sent("agentId", stringAt(at.value, loc))
		},
	},
	extensionEvent("user_message", server.ExtUserMessages),
	extensionEvent("turn_running", server.ExtTurnCatchUp),
	extensionEvent("confirmation_invalid", server.ExtToolDecisions),
	{
		name:   "decisions, arguments and parameters on write_confirmation_required's data",
		source: "kindkit's extension " + server.ExtToolDecisions,
		ext:    server.ExtToolDecisions,
		allows: func(at found) bool {
			ap, ok := at.err.ErrorKind.(*kind.AdditionalProperties)
			return ok && at.schema == "events/write-confirmation-required.schema.json" &&
				slices.Equal(at.err.InstanceLocation, []string{"data", "data"}) &&
				!slices.ContainsFunc(ap.Properties, func(p string) bool { return p != "decisions" && p != "arguments" && p != "parameters" })
		},
	},
	historyField("ended", server.ExtEndedTurns),
	historyField("interactions", server.ExtHistoryCards),
}

// extensionEvent allows event type typ, which the envelope's type enum
// lacks, kindkit's extension ext, to the connections that asked for ext.
func extensionEvent(typ, ext string) allowance {
	return allowance{
		name:   "event type " + typ + ", which the envelope's type enum lacks (kindkit's event; see extensionEvents)",
		source: "kindkit's extension " + ext,
		ext:    ext,
		allows: func(at found) bool {
			_, isEnum := at.err.ErrorKind.(*kind.Enum)
			return at.schema == "envelope.schema.json" && isEnum && slices.Equal(at.err.InstanceLocation, []string{"type"}) &&
				at.frame["type"] == typ
		},
	}
}

// historyField allows field on a history message (ConversationMessage),
// kindkit's extension ext, to the connections that asked for ext.
func historyField(field, ext string) allowance {
	return allowance{
		name:   field + " on a history message (ConversationMessage)",
		source: "kindkit's extension " + ext,
		ext:    ext,
		allows: func(at found) bool {
			ap, ok := at.err.ErrorKind.(*kind.AdditionalProperties)
			loc := at.err.InstanceLocation
			return at.schema == "actions/get-messages.schema.json" && ok && slices.Equal(ap.Properties, []string{field}) &&
				len(loc) == 2 && loc[0] == "messages"
		},
	}
}

// found is one difference: a leaf error of a frame's validation.
type found struct {
	schema string         // the schema's path under referenceSpec
	frame  map[string]any // the frame
	value  any            // the instance the schema validated: the frame or a part of it
	err    *jsonschema.ValidationError
	sent   func(field, value string) bool // whether a client sent value as field
}

// extensionEvents are kindkit's events, which the reference lacks, each
// with the extension a connection asks for it by: it is checked against
// the envelope only, and fails the gate on any other connection.
var extensionEvents = map[string]string{"user_message": server.ExtUserMessages, "turn_running": server.ExtTurnCatchUp,
	"confirmation_invalid": server.ExtToolDecisions}

type wireGate struct {
	envelope  *jsonschema.Schema
	events    map[string]*jsonschema.Schema // event type → its schema
	responses map[string]*jsonschema.Schema // action → its Response schema
	files     map[string]string             // action → its schema's path under referenceSpec

	mu              sync.Mutex
	conns           map[any]*gateConn
	frames          int                        // frames checked
	extended        int                        // of them, to connections that asked for an extension
	extensionEvents int                        // of them, kindkit's events (extensionEvents)
	used            map[int]int                // allowance index → times it let a difference pass
	sent            map[string]map[string]bool // field → the string values clients sent as it
	minted          map[string]int             // field → ids the server minted as it, checked to be UUIDv7
	seen            map[string]bool            // ids of cards and messages already checked
	violations      []string
}

// gateConn is what the gate knows of one connection, from what it read.
type gateConn struct {
	ext     map[string]bool   // the extensions it asked for
	actions map[string]string // requestId → the action last read with it
	resumes map[string]bool   // requestId → it asked for a conversation by id
	recent  []string          // its last frames, in and out, for a report
}

// loadWireGate compiles the reference schemas under dir.
func loadWireGate(dir string) (*wireGate, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()           // format: uuid and date-time, as the reference clients check them
	ids := map[string]string{} // path under dir → $id
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".schema.json") {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		id, _ := doc.(map[string]any)["$id"].(string)
		if id == "" {
			return fmt.Errorf("%s: no $id", path)
		}
		rel, _ := filepath.Rel(dir, path)
		ids[filepath.ToSlash(rel)] = id
		return c.AddResource(id, doc)
	})
	if err != nil {
		return nil, fmt.Errorf("wire gate: reading %s: %w", dir, err)
	}
	g := &wireGate{events: map[string]*jsonschema.Schema{}, responses: map[string]*jsonschema.Schema{}, files: map[string]string{},
		conns: map[any]*gateConn{}, used: map[int]int{}, sent: map[string]map[string]bool{}, minted: map[string]int{}, seen: map[string]bool{}}
	if g.envelope, err = c.Compile(ids["envelope.schema.json"] + "#/$defs/EventEnvelope"); err != nil {
		return nil, err
	}
	for rel, id := range ids {
		name := strings.TrimSuffix(filepath.Base(rel), ".schema.json")
		switch filepath.Dir(rel) {
		case "events":
			if g.events[strings.ReplaceAll(name, "-", "_")], err = c.Compile(id); err != nil {
				return nil, err
			}
		case "actions":
			action, err := actionOf(c, id)
			if err != nil || action == "" {
				return nil, fmt.Errorf("wire gate: %s: no action (%v)", rel, err)
			}
			if s, err := c.Compile(id + "#/$defs/Response"); err == nil {
				g.responses[action], g.files[action] = s, rel
			}
		}
	}
	if len(g.events) == 0 || len(g.responses) == 0 {
		return nil, fmt.Errorf("wire gate: no event or action schemas under %s", dir)
	}
	return g, nil
}

// actionOf is the action an action schema's Request names (its const).
func actionOf(c *jsonschema.Compiler, id string) (string, error) {
	s, err := c.Compile(id + "#/$defs/Request/properties/action")
	if err != nil {
		return "", err
	}
	if s.Const == nil {
		return "", nil
	}
	name, _ := (*s.Const).(string)
	return name, nil
}

// see is the server's frame hook.
func (g *wireGate) see(conn any, in bool, data []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	gc := g.conns[conn]
	if gc == nil {
		gc = &gateConn{ext: map[string]bool{}, actions: map[string]string{}, resumes: map[string]bool{}}
		g.conns[conn] = gc
	}
	dir := "<<< "
	if in {
		dir = ">>> "
	}
	gc.recent = append(gc.recent, dir+cutFrame(data))
	if len(gc.recent) > 6 {
		gc.recent = gc.recent[1:]
	}
	if in {
		g.read(gc, data)
		return
	}
	if errs := g.check(gc, data); len(errs) > 0 {
		g.violations = append(g.violations, fmt.Sprintf("%s\n\tframes of the connection, newest last:\n\t%s",
			strings.Join(errs, "\n"), strings.Join(gc.recent, "\n\t")))
	}
}

// read notes what a client frame declares: its extensions, which action
// a requestId belongs to, and the strings it sent.
func (g *wireGate) read(gc *gateConn, data []byte) {
	var f struct {
		Action         string          `json:"action"`
		RequestID      string          `json:"requestId"`
		ConversationID string          `json:"conversationId"`
		Supports       json.RawMessage `json:"supports"`
	}
	var fields map[string]any
	if json.Unmarshal(data, &f) != nil || json.Unmarshal(data, &fields) != nil {
		return
	}
	for k, v := range fields {
		if s, ok := v.(string); ok {
			if g.sent[k] == nil {
				g.sent[k] = map[string]bool{}
			}
			g.sent[k][s] = true
		}
	}
	gc.actions[f.RequestID] = f.Action
	gc.resumes[f.RequestID] = f.ConversationID != ""
	var supports []string
	if f.Action == "create_conversation_session" && json.Unmarshal(f.Supports, &supports) == nil {
		for _, s := range supports {
			if slices.ContainsFunc(allowances, func(a allowance) bool { return a.ext == s }) {
				gc.ext[s] = true
			}
		}
	}
}

// check validates one frame sent to gc and returns what no allowance
// covers.
func (g *wireGate) check(gc *gateConn, data []byte) []string {
	g.frames++
	if len(gc.ext) > 0 {
		g.extended++
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	frame, ok := inst.(map[string]any)
	if !ok {
		return []string{"not a JSON object"}
	}
	typ, _ := frame["type"].(string)
	out := g.mintedIDs(gc, typ, frame)
	validate := func(schema string, s *jsonschema.Schema, v any) {
		if err := s.Validate(v); err != nil {
			out = append(out, g.unallowed(gc, found{schema: schema, frame: frame, value: v}, err.(*jsonschema.ValidationError))...)
		}
	}
	validate("envelope.schema.json", g.envelope, inst)
	ev, ok := g.events[typ]
	if ext := extensionEvents[typ]; !ok && ext != "" && gc.ext[ext] {
		g.extensionEvents++
		return out
	}
	if !ok {
		return append(out, fmt.Sprintf("event type %q has no reference schema", typ))
	}
	validate("events/"+strings.ReplaceAll(typ, "_", "-")+".schema.json", ev, inst)
	if status, _ := frame["status"].(json.Number); typ == "immediate_response" && status == "200" {
		action := gc.actions[stringOf(frame["requestId"])]
		if resp, ok := g.responses[action]; ok {
			validate(g.files[action], resp, frame["data"])
		}
	}
	return out
}

// mintedIDs checks the ids a frame carries that the server has just
// minted: they must be UUIDv7s. Which ids are new is known from the frame
// alone: the session of a create_conversation_session ack (and its
// conversation, unless the client named one), and the first sight of a
// card's interactionId, of a reply's messageId and of a message
// user_message tells. The history lists stored messages, which may be
// older than time-ordered ids: it is not checked.
func (g *wireGate) mintedIDs(gc *gateConn, typ string, frame map[string]any) []string {
	var out []string
	check := func(field, id string) {
		g.minted[field]++
		if u, err := uuid.Parse(id); err != nil || u.Version() != 7 || u.String() != id {
			out = append(out, fmt.Sprintf("%s: %s %q was minted by the server, and is no canonical UUIDv7 (store.NewID)", typ, field, id))
		}
	}
	first := func(field string, keys ...string) {
		if id := stringAt(frame, keys); id != "" && !g.seen[id] {
			g.seen[id] = true
			check(field, id)
		}
	}
	switch typ {
	case "immediate_response":
		r := stringOf(frame["requestId"])
		if status, _ := frame["status"].(json.Number); status != "200" || gc.actions[r] != "create_conversation_session" {
			break
		}
		check("sessionId", stringAt(frame, []string{"data", "sessionId"}))
		if !gc.resumes[r] {
			check("conversationId", stringAt(frame, []string{"data", "conversationId"}))
		}
	case "interaction_required":
		first("interactionId", "data", "data", "interactionId")
	case "eventual_response":
		first("messageId", "data", "data", "messageId")
	case "user_message":
		first("message id", "data", "message", "id")
	}
	return out
}

var english = textmessage.NewPrinter(language.English)

func stringOf(v any) string { s, _ := v.(string); return s }

// stringAt is the string at keys in v, or "".
func stringAt(v any, keys []string) string {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return stringOf(v)
}

// unallowed lists err's leaf errors that no allowance for gc covers, and
// counts the allowances used.
func (g *wireGate) unallowed(gc *gateConn, at found, err *jsonschema.ValidationError) []string {
	at.sent = func(field, value string) bool { return g.sent[field][value] }
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		for i, a := range allowances {
			at.err = e
			if (a.ext == "" || gc.ext[a.ext]) && a.allows(at) {
				g.used[i]++
				return
			}
		}
		out = append(out, fmt.Sprintf("%s: at /%s: %s", at.schema, strings.Join(e.InstanceLocation, "/"), e.ErrorKind.LocalizedString(english)))
	}
	walk(err)
	return out
}

// report writes what the gate checked and found; it returns false when a
// frame broke the reference schemas.
func (g *wireGate) report(w io.Writer) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	fmt.Fprintf(w, "wire gate: %d frames checked against the reference schemas (%d to connections that asked for an extension; %d of kindkit's own events, to them)\n",
		g.frames, g.extended, g.extensionEvents)
	fmt.Fprintf(w, "wire gate: ids the server minted, checked to be UUIDv7: %s\n", countsOf(g.minted))
	var lines []string
	for i, a := range allowances {
		lines = append(lines, fmt.Sprintf("wire gate: allowance used %d times: %s; %s", g.used[i], a.name, a.source))
	}
	sort.Strings(lines)
	fmt.Fprintln(w, strings.Join(lines, "\n"))
	for _, v := range g.violations {
		fmt.Fprintln(w, "wire gate: a frame breaks the reference schemas:", v)
	}
	return len(g.violations) == 0
}

// countsOf is m as "k n, …", by key.
func countsOf(m map[string]int) string {
	var out []string
	for k, n := range m {
		out = append(out, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func cutFrame(data []byte) string {
	const max = 400
	if len(data) <= max {
		return string(data)
	}
	return string(data[:max]) + "…"
}

// The gate itself: it passes reference frames and each allowance, and
// fails an extension sent to a connection that did not ask for it, an
// event the reference does not have, and a payload of the wrong shape.
func TestWireGate(t *testing.T) {
	g, err := loadWireGate(referenceSpec)
	if err != nil {
		t.Fatal(err)
	}
	const (
		conv    = "94cfb3c3-0e6c-41ee-920b-bb2e41508ff2"
		history = `{"data":{"hasMore":false,"messages":[{"content":{"text":"hi"},"createdAt":"2026-12-03T06:41:43.09Z","direction":"inbound","id":"` + conv + `"%s}],"nextCursor":null},"message":"ConversationMessages","requestId":"h","status":200,"timestamp":1,"type":"immediate_response"}`
		cards   = `,"interactions":[{"kind":"choices","spec":{},"reason":"r","outcome":{"status":"declined"}}]`
	)
	askHistory := `{"action":"get_conversation_messages","requestId":"h","sessionId":"` + conv + `"}`
	// An ack of create_conversation_session "c" and a card.
	const (
		v7   = "019b0f4e-7a1c-7d2e-8f3a-4b5c6d7e8f90"
		card = `{"data":{"data":{"interactionId":"%s","kind":"choices","reason":"r","spec":{}},"requestId":"c"},"requestId":"c","timestamp":1,"type":"interaction_required"}`
	)
	created := func(convID, sessionID string) string {
		return `{"data":{"agentName":"k","agentParticipantId":"` + conv + `","conversationId":"` + convID + `","sessionId":"` + sessionID +
			`","userParticipantId":"` + conv + `"},"message":"Session created","requestId":"c","status":200,"timestamp":1,"type":"immediate_response"}`
	}
	for _, tc := range []struct {
		name     string
		supports string
		in, out  string
		ok       bool
	}{
		{"history", "[]", askHistory, fmt.Sprintf(history, ""), true},
		{"history cards, not asked for", `["choice_chips"]`, askHistory, fmt.Sprintf(history, cards), false},
		{"history cards, asked for", `["` + server.ExtHistoryCards + `"]`, askHistory, fmt.Sprintf(history, cards), true},
		{"cancelled", "[]", "", `{"data":{"requestId":"r","status":499},"requestId":"r","status":499,"timestamp":1,"type":"cancelled"}`, true},
		{"an event the reference lacks", "[]", "", `{"data":{},"requestId":"r","timestamp":1,"type":"turn_started"}`, false},
		{"user_message, not asked for", `["choice_chips"]`, "", `{"data":{"message":{"id":"m"},"requestId":"r"},"requestId":"r","timestamp":1,"type":"user_message"}`, false},
		{"user_message, asked for", `["` + server.ExtUserMessages + `"]`, "", `{"data":{"message":{"id":"m"},"requestId":"r"},"requestId":"r","timestamp":1,"type":"user_message"}`, true},
		{"turn_running, not asked for", `["choice_chips"]`, "", `{"data":{"requestId":"r"},"requestId":"r","timestamp":1,"type":"turn_running"}`, false},
		{"turn_running, asked for", `["` + server.ExtTurnCatchUp + `"]`, "", `{"data":{"requestId":"r"},"requestId":"r","timestamp":1,"type":"turn_running"}`, true},
		{"decisions, not asked for", `[]`, "", `{"data":{"data":{"actionDescription":"a","toolId":"t","decisions":["approve"]},"requestId":"r"},"requestId":"r","timestamp":1,"type":"write_confirmation_required"}`, false},
		{"decisions, asked for", `["` + server.ExtToolDecisions + `"]`, "", `{"data":{"data":{"actionDescription":"a","toolId":"t","decisions":["approve"],"arguments":{},"parameters":{}},"requestId":"r"},"requestId":"r","timestamp":1,"type":"write_confirmation_required"}`, true},
		{"another field, asked for", `["` + server.ExtToolDecisions + `"]`, "", `{"data":{"data":{"actionDescription":"a","toolId":"t","secret":1},"requestId":"r"},"requestId":"r","timestamp":1,"type":"write_confirmation_required"}`, false},
		{"a field the envelope lacks", "[]", "", `{"data":{"timestamp":1},"extra":1,"timestamp":1,"type":"pong"}`, false},
		{"otp_invalid as kindkit sent it before", "[]", "", `{"data":{"data":{"code":"NOT_FOUND","message":"m"},"requestId":"v"},"requestId":"v","timestamp":1,"type":"otp_invalid"}`, false},
		{"new ids, UUIDv7", "[]", "", created(v7, v7), true},
		{"a new session id, UUIDv4", "[]", "", created(v7, conv), false},
		{"a new conversation id, UUIDv4", "[]", "", created(conv, v7), false},
		{"a new id in upper case", "[]", "", created(strings.ToUpper(v7), v7), false},
		{"a conversation the client named, UUIDv4", "[]", `{"action":"create_conversation_session","requestId":"c","agentId":"a","conversationId":"` + conv + `"}`,
			created(conv, v7), true},
		{"a new card's id, UUIDv4", "[]", "", fmt.Sprintf(card, conv), false},
		{"a new card's id, UUIDv7", "[]", "", fmt.Sprintf(card, v7), true},
		{"a session id that is no uuid", "[]", `{"action":"get_session","requestId":"g","sessionId":"` + conv + `"}`,
			`{"data":{"agentName":"k","agentParticipantId":"` + conv + `","conversationId":"c","sessionId":"` + conv + `","userParticipantId":"` + conv + `"},"message":"OK","requestId":"g","status":200,"timestamp":1,"type":"immediate_response"}`, false},
	} {
		conn := new(int) // a connection of its own
		g.see(conn, true, []byte(`{"action":"create_conversation_session","requestId":"c","agentId":"a","supports":`+tc.supports+`}`))
		if tc.in != "" {
			g.see(conn, true, []byte(tc.in))
		}
		before := len(g.violations)
		g.see(conn, false, []byte(tc.out))
		if ok := len(g.violations) == before; ok != tc.ok {
			t.Errorf("%s: passed %v, want %v (%v)", tc.name, ok, tc.ok, g.violations[before:])
		}
	}
}
