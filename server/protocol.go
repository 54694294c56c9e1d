package server

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/store"
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
	codeRateLimited         = "RATE_LIMITED" // kindkit's: the reference defines it and never sends it
)

const (
	msgInvalidJSON          = "Invalid JSON frame"
	msgBinary               = "binary frames are not supported; send JSON text frames"
	msgInternal             = "Internal error processing the request."
	msgTurnInProgress       = "a turn is already in progress on this connection; cancel it or wait for it to complete"
	msgFieldsInvalid        = "Some fields need attention."
	msgRateLimited          = "too many frames; slow down"
	msgTooManyConversations = "too many new conversations; slow down"
	maxRequestID            = 256 // bytes of a requestId that are echoed; a longer one is refused
	maxEchoedAction         = 64  // bytes of an unknown action name that are echoed
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
	Code           json.RawMessage `json:"code"` // verify_otp's code: a string or a number
	// Withdraw, on send_message, names the pending card the message
	// answers in words (a kindkit extension): it is withdrawn even when
	// the message's session raised it.
	Withdraw string `json:"withdrawInteraction"`
	// KeepTurns, on create_conversation_session, asks that the
	// connection's turns run on when it closes instead of being aborted
	// (a kindkit extension): a page that reloads mid-reply finds the reply
	// still being written, then finished.
	KeepTurns bool `json:"keepTurns"`
	// Decision and Arguments, on confirm_tool_action, are a decision
	// beyond approve and reject (ExtToolDecisions): "edit" with the
	// arguments the call runs with, or "respond" with message as its
	// result; "reject" may give a message too.
	Decision  string          `json:"decision"`
	Arguments json.RawMessage `json:"arguments"`
}

// decodeFrame parses one text frame. supports, when present and not null,
// must be an array of strings.
func decodeFrame(data []byte) (*frame, []string, error) {
	var f frame
	if err := jsonv2.Unmarshal(data, &f, asV1); err != nil {
		return nil, nil, err
	}
	if len(f.Supports) == 0 || bytes.Equal(f.Supports, []byte("null")) {
		return &f, nil, nil
	}
	var supports []string // on the heap only here, where a frame has them
	if err := jsonv2.Unmarshal(f.Supports, &supports, asV1); err != nil {
		return nil, nil, err
	}
	if supports == nil {
		supports = []string{}
	}
	return &f, supports, nil
}

// event is every server event. Its fields are in alphabetical order, as the
// reference serialises them; empty ones are left out. A stream_token
// (token set) is written by hand: a turn sends many of them.
//
// Data, and a payload in it, hold a pointer where they can: json v2 copies
// what an interface holds to address it, and a pointer is 8 bytes to copy.
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

	token bool
}

// writeTo appends the event's JSON to buf. ev escapes to the encoder: a
// connection passes its own field (conn.encoding), which is on the heap
// already, so that no event is copied there.
func (ev *event) writeTo(buf *bytes.Buffer) error {
	if ev.token {
		buf.Grow(tokenSize(ev.RequestID, ev.Token))
		buf.Write(appendToken(buf.AvailableBuffer(), ev.RequestID, ev.Token, ev.Timestamp))
		return nil
	}
	return jsonv2.MarshalWrite(buf, ev, asV1)
}

// asV1 has json v2 write and read exactly what encoding/json does (the
// wire is the reference's), faster: a submit frame is read in 3.6 µs with
// 3 allocations instead of 7.0 µs and 16 (BenchmarkDecodeFrame), a card
// and an ack are written in 8.0 µs instead of 10.1 (BenchmarkEncodeEvent).
// Every frame of a cycle is read or written.
var asV1 = jsonv1.DefaultOptionsV1()

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type object = map[string]any

func now() int64 { return time.Now().UnixMilli() }

func immediate(requestID string, status int, message string, data any) event {
	if data == nil {
		data = struct{}{}
	}
	return event{Type: "immediate_response", RequestID: requestID, Status: status, Message: message, Data: data, Timestamp: now()}
}

func errorEvent(requestID, code, message string) event {
	body := &errorBody{Code: code, Message: message}
	return event{Type: "error", RequestID: requestID, Error: body, Data: &errorData{Error: body, RequestID: requestID}, Timestamp: now()}
}

type errorData struct {
	Error     *errorBody `json:"error"`
	RequestID string     `json:"requestId,omitempty"`
}

func tokenEvent(requestID, token string) event {
	return event{Type: "stream_token", RequestID: requestID, Token: token, Timestamp: now(), token: true}
}

// tokenSize is room for a token's frame: its fixed text is 110 bytes with a
// 13-digit timestamp; each string appears twice, with room for some
// escaping.
func tokenSize(requestID, token string) int { return 112 + 3*(len(requestID)+len(token)) }

// appendToken appends a stream_token frame to b, as encoding/json would
// write it.
func appendToken(b []byte, requestID, token string, timestamp int64) []byte {
	b = append(b, `{"data":{"requestId":`...)
	b = appendString(b, requestID)
	b = append(b, `,"token":`...)
	b = appendString(b, token)
	b = append(b, `},"requestId":`...)
	b = appendString(b, requestID)
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, timestamp, 10)
	b = append(b, `,"token":`...)
	b = appendString(b, token)
	return append(b, `,"type":"stream_token"}`...)
}

// appendString appends s as a JSON string, escaping what JSON requires and
// what encoding/json escapes by default (<, >, &, U+2028, U+2029), and
// replacing invalid UTF-8 as encoding/json does.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// nestedData is the data of an event whose payload sits at data.data.
type nestedData struct {
	Data      any    `json:"data"`
	RequestID string `json:"requestId"`
}

func nested(typ, requestID string, payload any) event {
	return event{Type: typ, RequestID: requestID, Data: &nestedData{payload, requestID}, Timestamp: now()}
}

type chunkData struct {
	Node      string     `json:"node"`
	RequestID string     `json:"requestId"`
	State     chunkState `json:"state"`
}

type chunkState struct {
	RawResponse rawResponse `json:"rawResponse"`
}

type rawResponse struct {
	ToolCall   *toolCallState   `json:"toolCall,omitempty"`
	ToolResult *toolResultState `json:"toolResult,omitempty"`
}

type toolCallState struct {
	Arguments json.RawMessage `json:"arguments"`
	Name      string          `json:"name"`
}

type toolResultState struct {
	IsError bool   `json:"isError"`
	Name    string `json:"name"`
	Result  string `json:"result"`
}

// toolCallChunk carries the model's arguments parsed as JSON; arguments
// that are empty or not JSON become {}.
func toolCallChunk(requestID, name, arguments string) event {
	var args bytes.Buffer
	if err := json.Compact(&args, []byte(arguments)); err != nil || args.String() == "null" {
		args.Reset()
		args.WriteString("{}")
	}
	return chunk(requestID, name, rawResponse{ToolCall: &toolCallState{Arguments: args.Bytes(), Name: name}})
}

func toolResultChunk(requestID, name, result string, isError bool) event {
	return chunk(requestID, name, rawResponse{ToolResult: &toolResultState{IsError: isError, Name: name, Result: result}})
}

func chunk(requestID, node string, raw rawResponse) event {
	return event{Type: "stream_chunk", RequestID: requestID, Node: node,
		Data: &chunkData{Node: node, RequestID: requestID, State: chunkState{raw}}, Timestamp: now()}
}

type statusData struct {
	RequestID string `json:"requestId,omitempty"`
	Status    int    `json:"status"`
}

func cancelledEvent(requestID string) event {
	return event{Type: "cancelled", RequestID: requestID, Status: 499, Data: &statusData{requestID, 499}, Timestamp: now()}
}

type timestampData struct {
	Timestamp int64 `json:"timestamp"`
}

func pongEvent(requestID string) event {
	ts := now()
	return event{Type: "pong", RequestID: requestID, Data: &timestampData{ts}, Timestamp: ts}
}

// interactionPayload is interaction_required's data.data.
// sessionPayload is a session's data in create_conversation_session's and
// get_session's acks. Typed payloads are written several times faster
// than maps; their fields are in the order encoding/json writes a map's
// keys, so the wire is as it was (TestPayloadsAsMaps).
type sessionPayload struct {
	AgentID            string `json:"agentId,omitempty"`
	AgentName          string `json:"agentName"`
	AgentParticipantID string `json:"agentParticipantId"`
	ConversationID     string `json:"conversationId"`
	SessionID          string `json:"sessionId"`
	UserParticipantID  string `json:"userParticipantId"`
}

// submitAck is submit_interaction's ack: the values taken, or declined.
type submitAck struct {
	Declined      bool            `json:"declined,omitempty"`
	InteractionID string          `json:"interactionId"`
	Kind          string          `json:"kind,omitempty"`
	SessionID     string          `json:"sessionId"`
	Values        json.RawMessage `json:"values,omitempty"`
}

type interactionPayload struct {
	InteractionID string          `json:"interactionId"`
	Kind          string          `json:"kind"`
	Reason        string          `json:"reason"`
	Spec          json.RawMessage `json:"spec"`
	// WaitingFor, a kindkit addition, is whom an addressed ask waits for
	// when this connection may not answer it: its card is read-only.
	WaitingFor string `json:"waitingFor,omitempty"`
}

// otpInvalid is otp_invalid's data.data.
type otpInvalid struct {
	Error             string `json:"error,omitempty"`
	AttemptsRemaining int    `json:"attemptsRemaining"`
	Message           string `json:"message"`
}

// userMessageEvent is kindkit's user_message event (ExtUserMessages): a
// message another session sent to the conversation, as the history has
// it, for the turn requestID.
func userMessageEvent(requestID string, m *store.Message) event {
	return event{Type: "user_message", RequestID: requestID, Timestamp: now(), Data: &userMessageData{RequestID: requestID,
		Message: historyMessage{ID: m.ID, Direction: "inbound", Content: messageContent{Text: m.Text},
			CreatedAt: m.CreatedAt.UTC().Format(time.RFC3339Nano)}}}
}

// turnRunningEvent is kindkit's turn_running event (ExtTurnCatchUp): the
// turn requestID is in progress, as a socket joins.
func turnRunningEvent(requestID string) event {
	return event{Type: "turn_running", RequestID: requestID, Timestamp: now(), Data: object{"requestId": requestID}}
}

type userMessageData struct {
	Message   historyMessage `json:"message"`
	RequestID string         `json:"requestId"`
}

// historyMessage is a message as get_conversation_messages lists it.
type historyMessage struct {
	Content   messageContent `json:"content"`
	CreatedAt string         `json:"createdAt"`
	Direction string         `json:"direction"`
	ID        string         `json:"id"`
}

type messageContent struct {
	Text string `json:"text"`
}

// eventualPayload is eventual_response's data.data.
type eventualPayload struct {
	MessageID       string        `json:"messageId"`
	NeedsEscalation bool          `json:"needsEscalation"`
	Response        replyResponse `json:"response"`
	Usage           usage         `json:"usage"`
	// Citations is present only when the turn drew on knowledge.
	Citations []agent.Citation `json:"citations,omitempty"`
}

type replyResponse struct {
	CustomerHappinessScore float64  `json:"customerHappinessScore"`
	NeedsSatisfactionScore float64  `json:"needsSatisfactionScore"`
	RequestSummary         string   `json:"requestSummary"`
	ResolutionStatus       string   `json:"resolutionStatus"`
	ResponseParts          []string `json:"responseParts"`
	SuggestedNextActions   []string `json:"suggestedNextActions"`
}

type usage struct {
	CompletionTokens int     `json:"completionTokens"`
	CostUSD          float64 `json:"costUsd"`
	PromptTokens     int     `json:"promptTokens"`
}

type eventualData struct {
	Data      eventualPayload `json:"data"`
	RequestID string          `json:"requestId"`
	Status    int             `json:"status"`
}

func eventualEvent(requestID string, p eventualPayload) event {
	return event{Type: "eventual_response", RequestID: requestID, Status: 200,
		Data: &eventualData{p, requestID, 200}, Timestamp: now()}
}
