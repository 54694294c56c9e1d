package agui

import (
	"encoding/json"
	"reflect"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/store"
)

// approvalSchema is a confirmation's responseSchema: approve or deny the
// call as the model made it.
var approvalSchema = json.RawMessage(`{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"],"additionalProperties":false}`)

// editSchema is the responseSchema of a confirmation whose tool's policy
// allows edits (agent.Edit): AG-UI's approve-with-edits, editedArgs
// matching the tool's parameters.
func editSchema(params json.RawMessage) json.RawMessage {
	if len(params) == 0 {
		params = json.RawMessage(`{"type":"object"}`)
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "required": []string{"approved"}, "additionalProperties": false,
		"properties": map[string]any{"approved": map[string]string{"type": "boolean"}, "editedArgs": params}})
	return b
}

// interruptOf is open park p as an AG-UI interrupt. A kind's card asks
// for input: its responseSchema is the kind's values schema, and its
// metadata the kind's name and canonical spec, so that a front end may
// draw the kind's own card and any other a form. A write confirmation is
// bound to its tool call (AG-UI's reason tool_call).
func (h *Handler) interruptOf(p *store.Park) interrupt {
	in := interrupt{ID: p.ID, ToolCallID: p.ToolCall.ID, ExpiresAt: expiresAt(p)}
	if p.Type == store.ParkConfirmation {
		in.Reason = "tool_call"
		in.Message = "Allow " + p.ToolCall.Name + "?"
		in.ResponseSchema = approvalSchema
		if h.eng.Allowed(p)&agent.Edit != 0 {
			tool, _ := h.eng.Tool(p.ToolCall.Name)
			in.ResponseSchema = editSchema(tool.Parameters)
		}
		in.Metadata = map[string]any{"tool": p.ToolCall.Name, "arguments": arguments(p.ToolCall.Arguments)}
		return in
	}
	in.Reason = "input_required"
	in.Message = p.Reason
	if k, ok := h.eng.AskedKind(p); ok { // the version that asked it, when kept across a deploy
		in.ResponseSchema = json.RawMessage(k.Descriptor().ValuesSchema)
	}
	in.Metadata = map[string]any{"kind": p.Kind, "spec": json.RawMessage(p.Spec)}
	return in
}

// expiresAt is p's deadline in ISO 8601, "" when it has none.
func expiresAt(p *store.Park) string {
	if p.Deadline.IsZero() {
		return ""
	}
	return p.Deadline.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// arguments is a call's arguments as JSON: as given when they are, else
// as a JSON string.
func arguments(args string) json.RawMessage {
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}

// sameAnswer tells whether resume e answers ended park p as it ended: the
// same values (compared canonical, as the kind makes them), a cancel of a
// declined card, the same decision on a confirmation.
func (h *Handler) sameAnswer(p *store.Park, e Resume) bool {
	var o struct {
		Status string          `json:"status"`
		Values json.RawMessage `json:"values"`
	}
	if json.Unmarshal(agent.AskRecordOf(p).Outcome, &o) != nil {
		return false
	}
	if p.Type == store.ParkConfirmation {
		d, errs := decision(e)
		approved := d.Decision == agent.Approve || d.Decision == agent.Edit
		return len(errs) == 0 && o.Status == map[bool]string{true: "approved", false: "denied"}[approved]
	}
	if e.Status == StatusCancelled {
		return o.Status == string(kindkit.StatusDeclined)
	}
	if o.Status != string(kindkit.StatusSubmitted) {
		return false
	}
	k, ok := h.catalog.Kind(p.Kind)
	if !ok {
		return false
	}
	spec, err := k.LoadSpec(p.Spec)
	if err != nil {
		return false
	}
	values, errs := k.Validate(&spec, e.Payload)
	return len(errs) == 0 && jsonEqual(values, o.Values)
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
