package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"
	"unicode/utf8"

	"github.com/kindkit/kindkit/knowledge"
	"github.com/kindkit/kindkit/store"
)

// ScriptEntry is one response of the scripted model, in the corpus's
// mockLlmScript format.
type ScriptEntry struct {
	Kind string `json:"kind"` // "text" or "toolCall"
	// Text is the reply; on a toolCall, words said before the call, in
	// the same response.
	Text      string `json:"text,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"` // JSON, as a string
	ID        string `json:"id,omitempty"`
	// DelayMs makes the entry wait this many milliseconds before it
	// answers (a slow model); a cancelled context ends the wait early.
	DelayMs int `json:"delayMs,omitempty"`
	// Calls are more tool calls of a toolCall's response, after its own
	// (kindkit's addition to the format: a step with several calls).
	Calls []ScriptCall `json:"calls,omitempty"`
}

// ScriptCall is one more tool call of a scripted response.
type ScriptCall struct {
	ID        string `json:"id,omitempty"` // call-2, call-3… when empty
	Name      string `json:"name"`
	Arguments string `json:"arguments,omitempty"`
}

// Scripted replays a script, one entry per model call. Its position is kept
// per conversation, so every conversation replays the script from its start.
type Scripted struct {
	Script []ScriptEntry
}

// scriptedUsage is what every scripted call reports.
var scriptedUsage = store.Usage{PromptTokens: 10, CompletionTokens: 5}

// NewScripted checks the entries.
func NewScripted(script []ScriptEntry) (*Scripted, error) {
	for i, e := range script {
		if e.DelayMs < 0 {
			return nil, fmt.Errorf("script entry %d: delayMs %d is negative", i, e.DelayMs)
		}
		switch e.Kind {
		case "text":
		case "toolCall":
			if e.Name == "" {
				return nil, fmt.Errorf("script entry %d: a toolCall needs a name", i)
			}
			if e.ID == "" {
				script[i].ID = "call-1"
			}
			for j, c := range e.Calls {
				if c.Name == "" {
					return nil, fmt.Errorf("script entry %d: call %d needs a name", i, j+2)
				}
				if c.ID == "" {
					script[i].Calls[j].ID = fmt.Sprintf("call-%d", j+2)
				}
			}
		default:
			return nil, fmt.Errorf("script entry %d: unknown kind %q (want text or toolCall)", i, e.Kind)
		}
		if e.Kind != "toolCall" && len(e.Calls) > 0 {
			return nil, fmt.Errorf("script entry %d: calls on a %s entry (want toolCall)", i, e.Kind)
		}
	}
	return &Scripted{Script: script}, nil
}

func (s *Scripted) Respond(ctx context.Context, req ModelRequest, onText func(string)) (ModelResponse, error) {
	if err := ctx.Err(); err != nil {
		return ModelResponse{}, err
	}
	if req.Position < 0 || req.Position >= len(s.Script) {
		// A drained script answers with nothing and reports no usage.
		return ModelResponse{Position: req.Position}, nil
	}
	e := s.Script[req.Position]
	if e.DelayMs > 0 {
		wait := time.NewTimer(time.Duration(e.DelayMs) * time.Millisecond)
		defer wait.Stop()
		select {
		case <-wait.C:
		case <-ctx.Done():
			return ModelResponse{}, ctx.Err()
		}
	}
	resp := ModelResponse{Usage: scriptedUsage, Position: req.Position + 1, Text: e.Text}
	for _, piece := range splitRunes(e.Text, 3) {
		onText(piece)
	}
	if e.Kind == "toolCall" {
		resp.ToolCalls = []store.ToolCall{{ID: e.ID, Name: e.Name, Arguments: e.Arguments}}
		for _, c := range e.Calls {
			resp.ToolCalls = append(resp.ToolCalls, store.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
	}
	return resp, nil
}

// splitRunes cuts s into at most n pieces of ceil(runes/n) runes each, never
// inside a UTF-8 sequence.
func splitRunes(s string, n int) []string {
	count := utf8.RuneCountInString(s)
	if count == 0 {
		return nil
	}
	parts := min(n, count)
	size := (count + parts - 1) / parts
	var out []string
	for len(s) > 0 {
		i, r := 0, 0
		for i < len(s) && r < size {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
			r++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// ScriptFile is what -script reads: a mockLlmScript array, or a whole
// scenario file whose server block also names tools and knowledge.
type ScriptFile struct {
	Script       []ScriptEntry
	Tools        []HostTool // fixed results
	ConfirmTools []string
	Knowledge    []knowledge.Doc
}

// LoadScript reads a script file.
func LoadScript(path string) (*ScriptFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseScript(data)
}

// ParseScript reads a mockLlmScript array or a scenario document.
func ParseScript(data []byte) (*ScriptFile, error) {
	var entries []ScriptEntry
	if err := json.Unmarshal(data, &entries); err == nil {
		if _, err := NewScripted(entries); err != nil {
			return nil, err
		}
		return &ScriptFile{Script: entries}, nil
	}
	var sc struct {
		Server struct {
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
				Result      string          `json:"result"`
			} `json:"tools"`
			ConfirmTools []string        `json:"confirmTools"`
			Knowledge    []knowledge.Doc `json:"knowledge"`
		} `json:"server"`
		Script *[]ScriptEntry `json:"mockLlmScript"`
	}
	if err := json.Unmarshal(data, &sc); err != nil {
		return nil, fmt.Errorf("parse script: want a mockLlmScript array or a scenario object: %w", err)
	}
	if sc.Script == nil {
		return nil, fmt.Errorf("parse script: the object has no mockLlmScript")
	}
	if _, err := NewScripted(*sc.Script); err != nil {
		return nil, err
	}
	f := &ScriptFile{Script: *sc.Script, ConfirmTools: sc.Server.ConfirmTools, Knowledge: sc.Server.Knowledge}
	for _, t := range sc.Server.Tools {
		if t.Name == "" {
			return nil, fmt.Errorf("parse script: a server tool has no name")
		}
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		f.Tools = append(f.Tools, FixedTool(Tool{Name: t.Name, Description: t.Description, Parameters: params}, t.Result))
	}
	return f, nil
}
