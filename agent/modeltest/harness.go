package modeltest

import (
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/store"
)

// Harness is one model adapter under test, with what the suite needs to
// fake its provider: how to build the adapter, how to write an answer in
// the provider's wire format and how to read a request in it.
type Harness struct {
	// Provider is the adapter's name, which its errors begin with
	// ("anthropic").
	Provider string
	// Path is the endpoint a call posts to, e.g. /v1/messages.
	Path string
	// New returns the adapter configured by cfg, calling the fake server
	// whose root URL is url (http://127.0.0.1:port, without a path).
	New func(t testing.TB, url string, cfg Config) agent.Model
	// Frames is reply's stream in the provider's wire format: whole
	// server-sent events, in order, with the provider's end of the answer
	// when reply.End is Finish. Reply.Status is never set here.
	Frames func(reply Reply) []string
	// ErrorBody is the provider's JSON error object of an HTTP error
	// answer, carrying message.
	ErrorBody func(status int, message string) string
	// Read reads the body of a request the adapter sent, failing t on
	// anything the provider would refuse or the harness cannot read.
	Read func(t *testing.T, body []byte) Request
	// Status is the HTTP status a failed call's error carries (the
	// adapter's Error.Status); ok is false when err is not the adapter's.
	Status func(err error) (status int, ok bool)
	// ErrorFlag says the provider's format marks a tool result as an error
	// (Anthropic's is_error). Without one (OpenAI's chat completions) the
	// result's text is all the model reads, so the engine words it as an
	// error.
	ErrorFlag bool
}

// Config is what the suite sets of an adapter's configuration.
type Config struct {
	Model  string // the model name
	APIKey string
	System string // the system prompt
	// MaxRetries is as the adapters' Config.MaxRetries: zero means their
	// default, negative none.
	MaxRetries int
	// MaxRetryDelay caps every retry delay, the SDK's backoff and the
	// server's retry hints alike.
	MaxRetryDelay time.Duration
	HTTPClient    *http.Client
	Logger        *slog.Logger
}

// Reply is one answer of the fake provider, said provider-neutrally.
type Reply struct {
	Text  []string // the text, in the pieces it streams in
	Calls []Call   // then the tool calls, in order
	Usage store.Usage
	// End is how the stream ends.
	End End
	// Error is the message of an ErrorEvent, or of a Status answer.
	Error string
	// Status, when not zero, answers with this HTTP status instead of a
	// stream: Body when set, else the provider's error object carrying
	// Error, with the Header pairs (name, value, …).
	Status int
	Body   string
	Header []string
}

// Call is one tool call of a Reply.
type Call struct {
	ID, Name string
	Args     []string // the arguments' JSON, in the pieces it streams in
}

// End is how a Reply's stream ends.
type End int

const (
	// Finish is the provider's end of a whole answer (a finish or stop
	// reason, then its last event); the connection then ends cleanly.
	Finish End = iota
	// Truncated ends the stream as the provider ends one, but the answer
	// has no end: no finish or stop reason.
	Truncated
	// Cut drops the connection after the text and calls.
	Cut
	// Stall holds the stream open after the text and calls, until the
	// client goes away.
	Stall
	// Malformed sends a frame whose data is not the provider's JSON, then
	// ends the stream.
	Malformed
	// ErrorEvent sends the provider's error event, carrying Reply.Error,
	// then ends the stream.
	ErrorEvent
)

// Request is a request an adapter sent, read back from the provider's wire
// format.
type Request struct {
	Model  string
	Stream bool
	// System is the system text, in order: the prompt, then the turn's
	// knowledge.
	System []string
	// Messages is the conversation, in order. A provider message that
	// carries several parts (Anthropic's text and tool_result blocks) is
	// one Message per part, in their order.
	Messages []Message
	Tools    []agent.Tool // Parameters as sent
}

// Message is one message (or one part of one) of a Request.
type Message struct {
	Role      store.Role       // user, assistant or tool
	Text      string           // a user's or assistant's text, a tool's result
	ToolCalls []store.ToolCall // an assistant's calls, Arguments as sent
	// ToolCallID is the call a tool result answers.
	ToolCallID string
	// IsError is the provider's error flag of a tool result; always false
	// without one.
	IsError bool
}

// handler is reply as h's provider answers it.
func (h Harness) handler(reply Reply) http.HandlerFunc {
	if reply.Status != 0 {
		body := reply.Body
		if body == "" {
			body = h.ErrorBody(reply.Status, reply.Error)
		}
		return Status(reply.Status, body, reply.Header...)
	}
	frames := h.Frames(reply)
	switch reply.End {
	case Cut:
		return Break(frames...)
	case Stall:
		return Hang(frames...)
	}
	return Stream(frames...)
}

// server starts a fake of h's provider answering with the replies.
func (h Harness) server(t *testing.T, replies ...Reply) *Server {
	t.Helper()
	handlers := make([]http.HandlerFunc, len(replies))
	for i, r := range replies {
		handlers[i] = h.handler(r)
	}
	return NewServer(t, h.Path, handlers...)
}
