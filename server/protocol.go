package server

import (
	"bytes"
	"encoding/json"
	"time"
)

// Error codes of the protocol (PROTOCOL.md §3.8).
const (
	codeValidation          = "VALIDATION_ERROR"
	codeUnsupportedAction   = "UNSUPPORTED_ACTION"
	codeSessionNotFound     = "SESSION_NOT_FOUND"
	codeTurnInProgress      = "TURN_IN_PROGRESS"
	codeNoPendingInteract   = "NO_PENDING_INTERACTION"
	codeInteractionMismatch = "INTERACTION_MISMATCH"
	codeNoPendingConfirm    = "NO_PENDING_CONFIRMATION"
	codeInternal            = "INTERNAL_ERROR"
	codeStorage             = "STORAGE_ERROR"
)

const (
	msgInvalidJSON    = "Invalid JSON frame"
	msgBinary         = "binary frames are not supported; send JSON text frames"
	msgInternal       = "Internal error processing the request."
	msgTurnInProgress = "a turn is already in progress on this connection; cancel it or wait for it to complete"
	msgFieldsInvalid  = "Some fields need attention."
)

// frame is every client action's fields. Fields whose absence differs from
// their zero value are raw or pointers. A known field of the wrong JSON
// type makes the whole frame invalid, as in the reference.
type frame struct {
	Action         string          `json:"action"`
	RequestID      string          `json:"requestId"`
	SessionID      string          `json:"sessionId"`
	AgentID        string          `json:"agentId"`
	UserName       string          `json:"userName"`
	UserEmail      string          `json:"userEmail"`
	ConversationID string          `json:"conversationId"`
	Supports       json.RawMessage `json:"supports"`
	Message        string          `json:"message"`
	Stream         bool            `json:"stream"`
	InteractionID  string          `json:"interactionId"`
	Kind           *string         `json:"kind"`
	Values         json.RawMessage `json:"values"`
	Declined       bool            `json:"declined"`
	Approved       *bool           `json:"approved"`
	Limit          int             `json:"limit"`
	Cursor         string          `json:"cursor"`
}

// decodeFrame parses one text frame. supports, when present and not null,
// must be an array of strings.
func decodeFrame(data []byte) (*frame, []string, error) {
	var f frame
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, nil, err
	}
	var supports []string
	if len(f.Supports) > 0 && !bytes.Equal(f.Supports, []byte("null")) {
		if err := json.Unmarshal(f.Supports, &supports); err != nil {
			return nil, nil, err
		}
		if supports == nil {
			supports = []string{}
		}
	}
	return &f, supports, nil
}

// event is every server event. Its fields are in alphabetical order, as the
// reference serialises them; empty ones are left out.
type event struct {
	Data      any        `json:"data,omitempty"`
	Error     *errorBody `json:"error,omitempty"`
	Message   string     `json:"message,omitempty"`
	Node      string     `json:"node,omitempty"`
	RequestID string     `json:"requestId,omitempty"`
	Status    int        `json:"status,omitempty"`
	Timestamp int64      `json:"timestamp"`
	Token     string     `json:"token,omitempty"`
	Type      string     `json:"type"`
}

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type object = map[string]any

func now() int64 { return time.Now().UnixMilli() }

func immediate(requestID string, status int, message string, data any) event {
	if data == nil {
		data = object{}
	}
	return event{Type: "immediate_response", RequestID: requestID, Status: status, Message: message, Data: data, Timestamp: now()}
}

func errorEvent(requestID, code, message string) event {
	body := &errorBody{Code: code, Message: message}
	data := object{"error": body}
	if requestID != "" {
		data["requestId"] = requestID
	}
	return event{Type: "error", RequestID: requestID, Error: body, Data: data, Timestamp: now()}
}

func tokenEvent(requestID, token string) event {
	return event{Type: "stream_token", RequestID: requestID, Token: token,
		Data: struct {
			RequestID string `json:"requestId"`
			Token     string `json:"token"`
		}{requestID, token}, Timestamp: now()}
}

// nested is an event whose payload sits at data.data.
func nested(typ, requestID string, payload any) event {
	return event{Type: typ, RequestID: requestID, Data: object{"requestId": requestID, "data": payload}, Timestamp: now()}
}

func toolCallChunk(requestID, name, arguments string) event {
	var args any
	if json.Unmarshal([]byte(arguments), &args) != nil || args == nil {
		args = object{}
	}
	return chunk(requestID, name, object{"toolCall": object{"name": name, "arguments": args}})
}

func toolResultChunk(requestID, name, result string, isError bool) event {
	return chunk(requestID, name, object{"toolResult": object{"name": name, "isError": isError, "result": result}})
}

func chunk(requestID, node string, raw object) event {
	return event{Type: "stream_chunk", RequestID: requestID, Node: node,
		Data: object{"requestId": requestID, "node": node, "state": object{"rawResponse": raw}}, Timestamp: now()}
}

func cancelledEvent(requestID string) event {
	data := object{"status": 499}
	if requestID != "" {
		data["requestId"] = requestID
	}
	return event{Type: "cancelled", RequestID: requestID, Status: 499, Data: data, Timestamp: now()}
}

func pongEvent(requestID string) event {
	ts := now()
	return event{Type: "pong", RequestID: requestID, Data: object{"timestamp": ts}, Timestamp: ts}
}
