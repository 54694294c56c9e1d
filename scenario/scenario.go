package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kindkit/kindkit/internal/jsonx"
)

// Lang is the name kindkit goes by in a scenario's knownDivergences list,
// beside the reference servers' "go", "rust", "python" and so on.
const Lang = "kindkit"

// DefaultToolCallID is the id of a toolCall script entry that gives none.
const DefaultToolCallID = "call-1"

// Script entry kinds.
const (
	KindText     = "text"
	KindToolCall = "toolCall"
)

// Scenario is one scenario file.
type Scenario struct {
	Name                   string        `json:"name"`
	Description            string        `json:"description"`
	Server                 Server        `json:"server"`
	MockLLMScript          []ScriptEntry `json:"mockLlmScript"`
	Steps                  []Step        `json:"steps"`
	KnownDivergences       []string      `json:"knownDivergences,omitempty"`
	KnownDivergencesReason string        `json:"knownDivergencesReason,omitempty"`

	// File is the path the scenario was read from, "" when it was built in
	// code. Errors and the knownDivergences rule name it.
	File string `json:"-"`
}

// Server is the deployment a scenario needs, applied before the server boots.
type Server struct {
	Tools []Tool `json:"tools,omitempty"`
	// ConfirmTools gates every tool whose name contains one of these
	// substrings behind write confirmation.
	ConfirmTools []string `json:"confirmTools,omitempty"`
	Knowledge    []Doc    `json:"knowledge,omitempty"`
}

// Tool is a deterministic test tool: it ignores its arguments and returns
// Result.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is the tool's JSON Schema; DefaultToolParameters when the
	// file gives none.
	Parameters json.RawMessage `json:"parameters,omitempty"`
	Result     string          `json:"result"`
}

// DefaultToolParameters is the schema of a tool that declares no parameters.
var DefaultToolParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// Doc is one knowledge document; its id is Source.
type Doc struct {
	Source  string `json:"source"`
	Content string `json:"content"`
}

// ScriptEntry is one scripted model response: text (KindText) or exactly one
// tool call (KindToolCall).
type ScriptEntry struct {
	Kind string `json:"kind"`
	Text string `json:"text,omitempty"`
	Name string `json:"name,omitempty"`
	// Arguments is the tool call's arguments as a JSON string, passed to the
	// model as is; it need not be valid JSON (a scenario may test exactly that).
	Arguments string `json:"arguments,omitempty"`
	// ID is the tool call's id, DefaultToolCallID when the file gives none.
	ID string `json:"id,omitempty"`
}

// Step sends one client frame and matches the events that follow.
type Step struct {
	// Send is the frame, a JSON object; string values "{{var}}" are
	// placeholders for captured values.
	Send   json.RawMessage `json:"send"`
	Expect []Matcher       `json:"expect"`
}

// Matcher is one expected event (or, with Repeat, a run of them).
type Matcher struct {
	// Type is the event's type; required.
	Type string `json:"type"`
	// Status, when set, must equal the event's top-level status.
	Status *float64 `json:"status,omitempty"`
	// StatusGte, when set, is a lower bound of the top-level status.
	StatusGte *float64 `json:"statusGte,omitempty"`
	// Assert maps dot paths, resolved from the event root, to the JSON value
	// found there. The path must exist.
	Assert map[string]json.RawMessage `json:"assert,omitempty"`
	// Capture maps a variable name to the dot path of the value it takes.
	Capture map[string]string `json:"capture,omitempty"`
	// Repeat consumes consecutive events of Type, zero or more; the first
	// event of another type ends the run and goes to the next matcher.
	Repeat bool `json:"repeat,omitempty"`
	// Accumulate names a top-level string field concatenated over the run.
	Accumulate string `json:"accumulate,omitempty"`
	// AssertAccumulated, when set, must equal the concatenation once the
	// run ends.
	AssertAccumulated *string `json:"assertAccumulated,omitempty"`
}

// FileError is a problem in a scenario file.
type FileError struct {
	File  string // the file as given to Load, or the name given to Parse
	Where string // e.g. "steps[1].expect[0]"; "" for the file as a whole
	Msg   string
}

func (e *FileError) Error() string {
	if e.Where == "" {
		return e.File + ": " + e.Msg
	}
	return e.File + ": " + e.Where + ": " + e.Msg
}

// Load reads and validates one scenario file.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load scenario: %w", err)
	}
	return Parse(path, data)
}

// LoadDir loads every *.json file of dir, in file-name order. It fails on the
// first bad file, and when dir holds no scenario at all.
func LoadDir(dir string) ([]*Scenario, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("load scenarios: %w", err)
	}
	if len(paths) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("load scenarios: %w", err)
		}
		return nil, fmt.Errorf("load scenarios: no *.json file in %s", dir)
	}
	sort.Strings(paths)
	out := make([]*Scenario, 0, len(paths))
	for _, p := range paths {
		s, err := Load(p)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Parse decodes and validates the bytes of a scenario file; name is used as
// Scenario.File and in errors.
func Parse(name string, data []byte) (*Scenario, error) {
	p := parser{file: name}
	s := p.parse(data)
	if p.err != nil {
		return nil, p.err
	}
	s.File = name
	return s, nil
}

type parser struct {
	file string
	err  *FileError
}

func (p *parser) fail(where, format string, args ...any) {
	if p.err == nil {
		p.err = &FileError{File: p.file, Where: where, Msg: fmt.Sprintf(format, args...)}
	}
}

// strict decodes one JSON value into v, rejecting unknown fields (a
// misspelled matcher field would otherwise silently weaken a test) and
// trailing data.
func (p *parser) strict(where string, data []byte, v any) bool {
	if err := jsonx.Decode(data, v); err != nil {
		p.fail(where, "%s", jsonErrorText(data, err))
		return false
	}
	return true
}

// object decodes data, which must be a JSON object, strictly into v.
func (p *parser) object(where string, data []byte, v any) bool {
	if !isObject(data) {
		p.fail(where, "must be an object")
		return false
	}
	return p.strict(where, data, v)
}

func (p *parser) parse(data []byte) *Scenario {
	var file struct {
		Name                   string            `json:"name"`
		Description            string            `json:"description"`
		Server                 json.RawMessage   `json:"server"`
		MockLLMScript          []json.RawMessage `json:"mockLlmScript"`
		Steps                  []json.RawMessage `json:"steps"`
		KnownDivergences       []string          `json:"knownDivergences"`
		KnownDivergencesReason string            `json:"knownDivergencesReason"`
	}
	if !isObject(data) {
		p.fail("", "a scenario file must hold a JSON object")
		return nil
	}
	if !p.strict("", data, &file) {
		return nil
	}
	s := &Scenario{
		Name:                   file.Name,
		Description:            file.Description,
		KnownDivergences:       file.KnownDivergences,
		KnownDivergencesReason: file.KnownDivergencesReason,
	}
	if strings.TrimSpace(s.Name) == "" {
		p.fail("name", "missing")
	}
	for i, lang := range s.KnownDivergences {
		if strings.TrimSpace(lang) == "" {
			p.fail(fmt.Sprintf("knownDivergences[%d]", i), "empty language name")
		}
	}
	if len(s.KnownDivergences) > 0 && strings.TrimSpace(s.KnownDivergencesReason) == "" {
		p.fail("knownDivergencesReason", "missing: a known divergence says why it is tolerated")
	}
	if len(file.Server) > 0 && string(file.Server) != "null" {
		p.server(file.Server, &s.Server)
	}
	for i, raw := range file.MockLLMScript {
		s.MockLLMScript = append(s.MockLLMScript, p.scriptEntry(fmt.Sprintf("mockLlmScript[%d]", i), raw))
	}
	if len(file.Steps) == 0 {
		p.fail("steps", "a scenario needs at least one step")
	}
	captured := map[string]bool{}
	for i, raw := range file.Steps {
		s.Steps = append(s.Steps, p.step(i, raw, captured))
	}
	return s
}

func (p *parser) server(raw json.RawMessage, out *Server) {
	if !p.object("server", raw, out) {
		return
	}
	for i := range out.Tools {
		t := &out.Tools[i]
		where := fmt.Sprintf("server.tools[%d]", i)
		if strings.TrimSpace(t.Name) == "" {
			p.fail(where, "missing name")
		}
		if len(t.Parameters) == 0 || string(t.Parameters) == "null" {
			t.Parameters = append(json.RawMessage(nil), DefaultToolParameters...)
		} else if !isObject(t.Parameters) {
			p.fail(where+".parameters", "must be a JSON Schema object")
		}
	}
	for i, c := range out.ConfirmTools {
		if c == "" {
			p.fail(fmt.Sprintf("server.confirmTools[%d]", i), "an empty substring would gate every tool")
		}
	}
	for i, d := range out.Knowledge {
		if strings.TrimSpace(d.Source) == "" {
			p.fail(fmt.Sprintf("server.knowledge[%d]", i), "missing source")
		}
	}
}

func (p *parser) scriptEntry(where string, raw json.RawMessage) ScriptEntry {
	var e ScriptEntry
	if !p.object(where, raw, &e) {
		return e
	}
	switch e.Kind {
	case KindText:
	case KindToolCall:
		if strings.TrimSpace(e.Name) == "" {
			p.fail(where, "a toolCall entry needs a name")
		}
		if e.ID == "" {
			e.ID = DefaultToolCallID
		}
	case "":
		p.fail(where, "missing kind (want %q or %q)", KindText, KindToolCall)
	default:
		p.fail(where, "unknown kind %q (want %q or %q)", e.Kind, KindText, KindToolCall)
	}
	return e
}

func (p *parser) step(i int, raw json.RawMessage, captured map[string]bool) Step {
	where := fmt.Sprintf("steps[%d]", i)
	var st struct {
		Send   json.RawMessage   `json:"send"`
		Expect []json.RawMessage `json:"expect"`
	}
	if !p.object(where, raw, &st) {
		return Step{}
	}
	out := Step{Send: st.Send}
	if !isObject(st.Send) {
		p.fail(where+".send", "must be a JSON object (one client frame)")
	} else {
		for _, name := range placeholders(st.Send) {
			if !captured[name] {
				p.fail(where+".send", "placeholder {{%s}} is not captured by an earlier step", name)
			}
		}
	}
	for j, mraw := range st.Expect {
		m := p.matcher(fmt.Sprintf("%s.expect[%d]", where, j), mraw)
		for name := range m.Capture {
			captured[name] = true
		}
		out.Expect = append(out.Expect, m)
	}
	return out
}

func (p *parser) matcher(where string, raw json.RawMessage) Matcher {
	var m Matcher
	if !p.object(where, raw, &m) {
		return m
	}
	if m.Type == "" {
		p.fail(where, "missing type")
	}
	for _, path := range sortedKeys(m.Assert) {
		if err := checkPath(path); err != nil {
			p.fail(where+".assert", "%v", err)
		}
	}
	for _, name := range sortedKeys(m.Capture) {
		if !validVarName(name) {
			p.fail(where+".capture", "invalid variable name %q", name)
		}
		if err := checkPath(m.Capture[name]); err != nil {
			p.fail(where+".capture."+name, "%v", err)
		}
	}
	if m.Accumulate != "" && !m.Repeat {
		p.fail(where, "accumulate needs repeat: true")
	}
	if m.AssertAccumulated != nil && m.Accumulate == "" {
		p.fail(where, "assertAccumulated needs accumulate")
	}
	return m
}

// isObject reports whether data is a JSON object (leading space allowed).
func isObject(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// jsonErrorText turns an encoding/json error into text that locates a
// syntax error by line and column.
func jsonErrorText(data []byte, err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line, col := lineCol(data, syn.Offset)
		return fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, syn.Error())
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "invalid JSON: unexpected end of input"
	}
	if errors.Is(err, jsonx.ErrTrailing) {
		return "invalid JSON: " + err.Error()
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func lineCol(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	if col < 1 {
		col = 1
	}
	return line, col
}
