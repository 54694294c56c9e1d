package anthropic

// A fake Anthropic Messages API for this package's tests: the events of a
// stream, in the wire format Anthropic documents for POST /v1/messages
// with "stream": true, served by modeltest.Server:
//
//	event: message_start         data: {"type":"message_start","message":{…,"usage":{…}}}
//	event: content_block_start   data: {"type":"content_block_start","index":0,"content_block":{…}}
//	event: ping                  data: {"type":"ping"}
//	event: content_block_delta   data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta"|"input_json_delta",…}}
//	event: content_block_stop    data: {"type":"content_block_stop","index":0}
//	event: message_delta         data: {"type":"message_delta","delta":{"stop_reason":…},"usage":{"output_tokens":…}}
//	event: message_stop          data: {"type":"message_stop"}
//	event: error                 data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/kindkit/kindkit/agent/modeltest"
)

// newFake starts a fake Messages API answering with the handlers in turn;
// its URL is the base URL (without /v1).
func newFake(t testing.TB, replies ...http.HandlerFunc) *modeltest.Server {
	return modeltest.NewServer(t, "/v1/messages", replies...)
}

// stream answers with the events; the connection then ends cleanly.
func stream(events ...string) http.HandlerFunc { return modeltest.Stream(events...) }

// APIError is the body of an error answer, e.g. APIError("rate_limit_error", "…").
func APIError(typ, message string) string {
	return `{"type":"error","error":{"type":` + quote(typ) + `,"message":` + quote(message) + `},"request_id":"req_011CTest"}`
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// event is one server-sent event.
func event(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

// MessageStart opens the message, reporting its input tokens.
func MessageStart(inputTokens int) string {
	return event("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_01Test","type":"message","role":"assistant","content":[],"model":"fake-model","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`, inputTokens))
}

// Ping is the keep-alive event.
func Ping() string { return event("ping", `{"type": "ping"}`) }

// TextStart opens a text block.
func TextStart(index int) string {
	return event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, index))
}

// TextDelta is a piece of a text block.
func TextDelta(index int, s string) string {
	return event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, index, quote(s)))
}

// ToolStart opens a tool_use block; its input arrives in InputDeltas.
func ToolStart(index int, id, name string) string {
	return event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%s,"name":%s,"input":{}}}`, index, quote(id), quote(name)))
}

// InputDelta is a piece of a tool_use block's input JSON.
func InputDelta(index int, partial string) string {
	return event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, index, quote(partial)))
}

// BlockStop closes a block.
func BlockStop(index int) string {
	return event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index))
}

// MessageDelta ends the message with a stop reason and the output tokens.
func MessageDelta(stopReason string, outputTokens int) string {
	return event("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%s,"stop_sequence":null},"usage":{"output_tokens":%d}}`, quote(stopReason), outputTokens))
}

// MessageStop is the last event.
func MessageStop() string { return event("message_stop", `{"type":"message_stop"}`) }

// ErrorEvent is an error in a stream, e.g. ErrorEvent("overloaded_error", "Overloaded").
func ErrorEvent(typ, message string) string {
	return event("error", `{"type":"error","error":{"type":`+quote(typ)+`,"message":`+quote(message)+`}}`)
}

// TextMessage is a whole streamed message of one text block in pieces.
func TextMessage(inputTokens, outputTokens int, pieces ...string) []string {
	evs := []string{MessageStart(inputTokens), TextStart(0), Ping()}
	for _, p := range pieces {
		evs = append(evs, TextDelta(0, p))
	}
	return append(evs, BlockStop(0), MessageDelta("end_turn", outputTokens), MessageStop())
}

// ToolMessage is a whole streamed message of one tool_use block whose input
// arrives in the pieces.
func ToolMessage(inputTokens, outputTokens int, id, name string, pieces ...string) []string {
	evs := []string{MessageStart(inputTokens), ToolStart(0, id, name)}
	for _, p := range pieces {
		evs = append(evs, InputDelta(0, p))
	}
	return append(evs, BlockStop(0), MessageDelta("tool_use", outputTokens), MessageStop())
}
