package openai

// A fake OpenAI-compatible chat-completions API for this package's tests:
// the chunks of a stream, in the wire format OpenAI documents for POST
// /v1/chat/completions with "stream": true, served by modeltest.Server.
// Each chunk is one server-sent event "data: {…}\n\n"; the stream ends with
// "data: [DONE]".

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/kindkit/kindkit/agent/modeltest"
)

// newFake starts a fake API answering with the handlers in turn; its base
// URL is the returned URL.
func newFake(t testing.TB, replies ...http.HandlerFunc) (*modeltest.Server, string) {
	s := modeltest.NewServer(t, "/v1/chat/completions", replies...)
	return s, s.URL + "/v1"
}

// frames are the chunks as server-sent events.
func frames(chunks ...string) []string {
	out := make([]string, len(chunks))
	for i, c := range chunks {
		out[i] = "data: " + c + "\n\n"
	}
	return out
}

// done is the last event of a stream.
const done = "data: [DONE]\n\n"

// stream answers with the chunks, then data: [DONE].
func stream(chunks ...string) http.HandlerFunc {
	return modeltest.Stream(append(frames(chunks...), done)...)
}

// chunkJSON is one chunk; like OpenAI's with include_usage, a chunk
// without usage says "usage":null.
func chunkJSON(choices string, extra string) string {
	if extra == "" {
		extra = `,"usage":null`
	}
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"fake","choices":[` + choices + `]` + extra + `}`
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// RoleChunk is the usual first chunk: the role and empty content.
func RoleChunk() string {
	return chunkJSON(`{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}`, "")
}

// TextChunk is one text delta.
func TextChunk(s string) string {
	return chunkJSON(`{"index":0,"delta":{"content":`+quote(s)+`},"finish_reason":null}`, "")
}

// ToolChunk is one tool-call delta; id and name are left out when empty.
func ToolChunk(index int, id, name, args string) string {
	call := fmt.Sprintf(`{"index":%d`, index)
	if id != "" {
		call += `,"id":` + quote(id) + `,"type":"function"`
	}
	fn := `"arguments":` + quote(args)
	if name != "" {
		fn = `"name":` + quote(name) + `,` + fn
	}
	call += `,"function":{` + fn + `}}`
	return chunkJSON(`{"index":0,"delta":{"tool_calls":[`+call+`]},"finish_reason":null}`, "")
}

// FinishChunk ends the choice.
func FinishChunk(reason string) string {
	return chunkJSON(`{"index":0,"delta":{},"finish_reason":`+quote(reason)+`}`, "")
}

// UsageChunk is the include_usage chunk: no choices, the usage.
func UsageChunk(prompt, completion int) string {
	return chunkJSON("", fmt.Sprintf(`,"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}`,
		prompt, completion, prompt+completion))
}
