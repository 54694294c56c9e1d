package agui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Input is what a run reads of AG-UI's RunAgentInput. The rest of it
// (tools, context, state, forwardedProps) is accepted and not used: the
// agent's tools and state are kindkit's own (docs/agui.md).
type Input struct {
	ThreadID string
	RunID    string
	Messages []Message
	Resume   []Resume
}

// Message is one message of the input: its id, its role, and its text
// (a multimodal message's text parts, joined; other parts are dropped).
type Message struct {
	ID   string
	Role string
	Text string
}

// Resume is an answer to one interrupt: Payload for a resolved one, none
// for a cancelled one.
type Resume struct {
	InterruptID string
	Status      string // StatusResolved or StatusCancelled
	Payload     json.RawMessage
}

// A resume entry's statuses.
const (
	StatusResolved  = "resolved"
	StatusCancelled = "cancelled"
)

// maxIDBytes bounds a thread's, a run's, a message's and an interrupt's id.
const maxIDBytes = 256

// roles are the message roles of AG-UI 1.0.
var roles = map[string]bool{"developer": true, "system": true, "assistant": true, "user": true, "tool": true, "activity": true, "reasoning": true}

// ParseInput reads a RunAgentInput. Every problem is an error that says
// which field is wrong; nothing in data can make it panic.
func ParseInput(data []byte) (*Input, error) {
	var raw struct {
		ThreadID *string           `json:"threadId"`
		RunID    *string           `json:"runId"`
		Messages []json.RawMessage `json:"messages"`
		Resume   []json.RawMessage `json:"resume"`
	}
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return nil, errors.New("the body is not a JSON object (a RunAgentInput)")
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("invalid RunAgentInput: %w", err)
	}
	in := &Input{}
	var err error
	if in.ThreadID, err = id("threadId", raw.ThreadID); err != nil {
		return nil, err
	}
	if in.RunID, err = id("runId", raw.RunID); err != nil {
		return nil, err
	}
	for i, m := range raw.Messages {
		msg, err := parseMessage(m)
		if err != nil {
			return nil, fmt.Errorf("messages[%d]: %w", i, err)
		}
		in.Messages = append(in.Messages, msg)
	}
	seen := map[string]bool{}
	for i, r := range raw.Resume {
		entry, err := parseResume(r)
		if err != nil {
			return nil, fmt.Errorf("resume[%d]: %w", i, err)
		}
		if seen[entry.InterruptID] {
			return nil, fmt.Errorf("resume[%d]: interrupt %q is answered twice", i, entry.InterruptID)
		}
		seen[entry.InterruptID] = true
		in.Resume = append(in.Resume, entry)
	}
	return in, nil
}

// id checks a required id field.
func id(field string, v *string) (string, error) {
	switch {
	case v == nil || *v == "":
		return "", fmt.Errorf("%s is required", field)
	case len(*v) > maxIDBytes:
		return "", fmt.Errorf("%s is longer than %d bytes", field, maxIDBytes)
	case !utf8.ValidString(*v):
		return "", fmt.Errorf("%s is not valid UTF-8", field)
	}
	return *v, nil
}

func parseMessage(data json.RawMessage) (Message, error) {
	var raw struct {
		ID      *string         `json:"id"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := object(data, &raw); err != nil {
		return Message{}, err
	}
	msgID, err := id("id", raw.ID)
	if err != nil {
		return Message{}, err
	}
	if !roles[raw.Role] {
		return Message{}, fmt.Errorf("role %q is not one of AG-UI's", raw.Role)
	}
	m := Message{ID: msgID, Role: raw.Role}
	if raw.Role != "user" {
		return m, nil // only a person's words start a turn; the rest is kindkit's own history
	}
	if m.Text, err = text(raw.Content); err != nil {
		return Message{}, fmt.Errorf("content: %w", err)
	}
	return m, nil
}

// text is a user message's content: a string, or the text parts of a list
// of parts, joined by blank lines.
func text(content json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(content, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(content, &parts); err != nil {
		return "", errors.New("neither a string nor a list of parts")
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n\n"), nil
}

func parseResume(data json.RawMessage) (Resume, error) {
	var raw struct {
		InterruptID *string         `json:"interruptId"`
		Status      string          `json:"status"`
		Payload     json.RawMessage `json:"payload"`
	}
	if err := object(data, &raw); err != nil {
		return Resume{}, err
	}
	interrupt, err := id("interruptId", raw.InterruptID)
	if err != nil {
		return Resume{}, err
	}
	r := Resume{InterruptID: interrupt, Status: raw.Status}
	switch raw.Status {
	case StatusResolved:
		r.Payload = raw.Payload
	case StatusCancelled: // a payload means nothing then
	default:
		return Resume{}, fmt.Errorf("status %q is neither %q nor %q", raw.Status, StatusResolved, StatusCancelled)
	}
	return r, nil
}

// object decodes data, which must be a JSON object, into v.
func object(data json.RawMessage, v any) error {
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return errors.New("not a JSON object")
	}
	return json.Unmarshal(data, v)
}
