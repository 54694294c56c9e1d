package kindload

import "encoding/json"

// Event is what kindload reads of a server event: only the fields the
// flow and the order checks need.
type Event struct {
	Type      string     `json:"type"`
	RequestID string     `json:"requestId"`
	Status    int        `json:"status"`
	Error     *errorBody `json:"error"`
	Data      struct {
		SessionID      string `json:"sessionId"`
		ConversationID string `json:"conversationId"`
		Data           struct {
			InteractionID string `json:"interactionId"`
			Kind          string `json:"kind"`
		} `json:"data"`
		State struct {
			RawResponse struct {
				ToolCall   *toolRef `json:"toolCall"`
				ToolResult *toolRef `json:"toolResult"`
			} `json:"rawResponse"`
		} `json:"state"`
	} `json:"data"`

	raw []byte // the frame as read, for failure reports
}

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type toolRef struct {
	Name    string `json:"name"`
	IsError bool   `json:"isError"`
	Result  string `json:"result"`
}

// ParseEvent decodes one text frame.
func ParseEvent(b []byte) (*Event, error) {
	ev := new(Event)
	if err := json.Unmarshal(b, ev); err != nil {
		return nil, err
	}
	ev.raw = b
	return ev, nil
}

// label names an event for messages: its type, and for a chunk whether it
// is a tool call or a tool result.
func (ev *Event) label() string {
	switch ev.Type {
	case "stream_chunk":
		switch {
		case ev.Data.State.RawResponse.ToolCall != nil:
			return "toolCall stream_chunk"
		case ev.Data.State.RawResponse.ToolResult != nil:
			return "toolResult stream_chunk"
		}
	case "error":
		if ev.Error != nil {
			return "error " + ev.Error.Code
		}
	}
	return ev.Type
}

// frame is the event's raw frame for a failure report, cut to n bytes.
func (ev *Event) frame(n int) string {
	if len(ev.raw) <= n {
		return string(ev.raw)
	}
	return string(ev.raw[:n]) + "…"
}
