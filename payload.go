package kindkit

import (
	"bytes"
	"encoding/json"
)

// Status is how an interaction ended.
type Status string

const (
	StatusSubmitted  Status = "submitted"
	StatusDeclined   Status = "declined"
	StatusNoResponse Status = "no_response"
)

// Messages the agent reads when there are no values.
const (
	DeclinedMessage         = "The visitor declined. Continue helping them without this and do not ask again this conversation."
	ConversationDeclinedMsg = "Noted. Continue helping the visitor without this and do not ask again this conversation."
	NoResponseMessage       = "The visitor did not respond to the card. Continue without it; you may offer again later if it becomes relevant."
)

// Payload is the canonical result a parked turn resumes with, the same for
// every kind and on both the card and the conversational path. Its fields are
// in alphabetical order so its JSON matches the protocol's byte form.
type Payload struct {
	Message string          `json:"message,omitempty"`
	Status  Status          `json:"status"`
	Values  json.RawMessage `json:"values,omitempty"`
}

// Submitted is the payload of valid, canonical values.
func Submitted(values json.RawMessage) Payload {
	return Payload{Status: StatusSubmitted, Values: values}
}

// Declined is the payload of a person who declined the card.
func Declined() Payload { return Payload{Status: StatusDeclined, Message: DeclinedMessage} }

// NoResponse is the payload of a park that expired or was dropped.
func NoResponse() Payload { return Payload{Status: StatusNoResponse, Message: NoResponseMessage} }

// JSON is the payload as the tool result string the model receives: compact,
// with non-ASCII and HTML characters left as they are.
func (p Payload) JSON() string { return marshalString(p) }

// FallbackDirective is the raise tool's result on the conversational path,
// where the channel cannot show the card: it tells the model to ask in
// conversation and submit with the submit_interaction tool. Its fields are
// in alphabetical order, as on the wire.
type FallbackDirective struct {
	Instructions string          `json:"instructions"`
	Kind         string          `json:"kind"`
	Mode         string          `json:"mode"` // always "conversational"
	Reason       string          `json:"reason"`
	Spec         json.RawMessage `json:"spec"`
}

// marshalString encodes v compactly without escaping <, > and &.
func marshalString(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only values built in this package reach here; they always encode.
		panic("kindkit: encode: " + err.Error())
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}
