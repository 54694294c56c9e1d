package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/modelhttp"
	"github.com/kindkit/kindkit/store"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultMaxRetries is how often a failed request is retried when
// Config.MaxRetries is zero.
const DefaultMaxRetries = modelhttp.DefaultMaxRetries

const (
	maxArgsInError = 200 // bytes of bad tool arguments quoted in an error
)

// Config configures a Model.
type Config struct {
	// BaseURL is the API's root, e.g. https://api.openai.com/v1 or
	// http://127.0.0.1:11434/v1 (Ollama). Empty means DefaultBaseURL.
	BaseURL string
	// Model is the model name, e.g. gpt-4o-mini or llama3.1. Required.
	Model string
	// APIKey is sent as a bearer token; empty sends none (local servers).
	// It is never logged.
	APIKey string
	// System is an optional system prompt, sent first.
	System string
	// MaxRetries bounds the SDK's retries of a request that got no answer,
	// or a 408, 409, 429 or 5xx one (always before the first delta): zero
	// means DefaultMaxRetries, negative means none.
	MaxRetries int
	// HTTPClient makes the requests; nil means a client whose transport is
	// http.DefaultTransport's with a 10-minute response-header timeout.
	HTTPClient *http.Client
	// Logger receives one line per failure or retry; nil means slog.Default().
	Logger *slog.Logger
}

// Model is a agent.Model over an OpenAI-compatible chat-completions API.
// It is safe for concurrent use.
type Model struct {
	model      string
	system     string
	apiKey     string
	maxRetries int
	chat       oai.ChatCompletionService
	log        *slog.Logger
	maxDelay   time.Duration // the cap of every retry delay
}

var (
	_ agent.Model      = (*Model)(nil)
	_ agent.NamedModel = (*Model)(nil)
)

// ModelName is the model Config.Model named, for traces
// (gen_ai.request.model).
func (m *Model) ModelName() string { return m.model }

// New checks cfg and returns a Model. It makes no request.
func New(cfg Config) (*Model, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("openai: Config.Model is required (e.g. gpt-4o-mini, llama3.1)")
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	if err := modelhttp.CheckBaseURL("openai", base, "http(s)://host[:port]/path"); err != nil {
		return nil, err
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = modelhttp.HTTPClient()
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	retries := modelhttp.Retries(cfg.MaxRetries)
	// The service is built from explicit options only: NewClient would also
	// read OPENAI_BASE_URL, OPENAI_ORG_ID and friends from the environment,
	// and the configuration here must be the whole truth.
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(retries),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	return &Model{
		model:      cfg.Model,
		system:     cfg.System,
		apiKey:     cfg.APIKey,
		maxRetries: retries,
		chat:       oai.NewChatCompletionService(opts...),
		log:        log,
		maxDelay:   modelhttp.MaxDelay,
	}, nil
}

// Respond makes one streamed chat completion; see the package doc.
func (m *Model) Respond(ctx context.Context, req agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	params, err := m.params(req)
	if err != nil {
		return agent.ModelResponse{}, err
	}
	a := &attempts{m: m}
	resp, err := m.attempt(ctx, a, params, onText)
	if err == nil {
		resp.Position = req.Position
		return resp, nil
	}
	if ctx.Err() != nil {
		return agent.ModelResponse{}, fmt.Errorf("openai: %w", ctx.Err())
	}
	why := m.describe(err, a.status)
	m.log.Error("openai: model call failed", "model", m.model, "status", a.status, "attempt", a.n, "err", why)
	if a.n > 1 {
		why += fmt.Sprintf(" (after %d attempts)", a.n)
	}
	return agent.ModelResponse{}, &Error{Status: a.status, msg: why, err: err}
}

// params builds the request body.
func (m *Model) params(req agent.ModelRequest) (oai.ChatCompletionNewParams, error) {
	p := oai.ChatCompletionNewParams{
		Model:         shared.ChatModel(m.model),
		StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)},
	}
	if m.system != "" {
		p.Messages = append(p.Messages, oai.SystemMessage(m.system))
	}
	if len(req.Knowledge) > 0 {
		p.Messages = append(p.Messages, oai.SystemMessage(modelhttp.KnowledgePrompt(req.Knowledge)))
	}
	for i, msg := range req.History {
		if msg == nil {
			continue
		}
		switch msg.Role {
		case store.RoleUser:
			p.Messages = append(p.Messages, oai.UserMessage(msg.Text))
		case store.RoleAssistant:
			a := oai.ChatCompletionAssistantMessageParam{}
			if msg.Text != "" || len(msg.ToolCalls) == 0 {
				a.Content.OfString = oai.String(msg.Text)
			}
			for _, c := range msg.ToolCalls {
				args := c.Arguments
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ID,
						Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: args},
					},
				})
			}
			p.Messages = append(p.Messages, oai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case store.RoleTool:
			if msg.ToolCallID == "" {
				return p, fmt.Errorf("openai: history message %d: a tool result without a tool call id", i)
			}
			p.Messages = append(p.Messages, oai.ToolMessage(msg.Text, msg.ToolCallID))
		default:
			// Only user, assistant and tool messages are the model's
			// conversation; anything else is not sent.
		}
	}
	for _, t := range req.Tools {
		fn := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fn.Description = oai.String(t.Description)
		}
		if len(bytes.TrimSpace(t.Parameters)) > 0 {
			// The schema's members are passed through as raw JSON, so
			// nothing of it is re-encoded (the SDK's encoder writes a
			// json.Number as a string).
			var members map[string]json.RawMessage
			if err := json.Unmarshal(t.Parameters, &members); err != nil || members == nil {
				return p, fmt.Errorf("openai: tool %s: parameters are not a JSON object", t.Name)
			}
			schema := make(shared.FunctionParameters, len(members))
			for k, v := range members {
				schema[k] = v
			}
			fn.Parameters = schema
		}
		p.Tools = append(p.Tools, oai.ChatCompletionFunctionTool(fn))
	}
	return p, nil
}

// callAcc is one tool call being reassembled.
type callAcc struct {
	index int64 // the provider's index
	seq   int   // arrival order, for calls that share an index
	id    string
	name  string
	args  strings.Builder
}

// attempts is what the HTTP requests of one Respond learnt besides their
// result; the SDK makes them, retrying as Config.MaxRetries allows.
type attempts struct {
	m       *Model
	n       int    // requests made
	status  int    // the last answer's HTTP status, 0 when none came
	why     string // the last request's failure, for the retry log
	started bool   // a delta arrived: text may have reached the person
}

// middleware sees every request the SDK makes. It records the status,
// whatever the SDK makes of the body (an HTML 502 from a proxy is not an
// OpenAI error object), and logs a retry when the SDK sends the request
// again: only then is it known that the SDK retries rather than gives up.
// The log line names the model, status and attempt, never the key, the
// request or the visitor's text.
func (a *attempts) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	if a.n > 0 {
		a.m.log.Warn("openai: model call failed, retrying", "model", a.m.model, "status", a.status,
			"attempt", a.n, "maxAttempts", a.m.maxRetries+1, "err", a.why)
	}
	a.n++
	res, err := next(req)
	a.status, a.why = 0, ""
	switch {
	case err != nil:
		a.why = a.m.scrub("request failed: " + err.Error())
	case res.StatusCode >= 300:
		a.status = res.StatusCode
		a.why = fmt.Sprintf("HTTP %d %s", res.StatusCode, http.StatusText(res.StatusCode))
	default:
		a.status = res.StatusCode
	}
	return res, err
}

// attempt makes the request, with the SDK's retries, and reads its stream.
func (m *Model) attempt(ctx context.Context, a *attempts, params oai.ChatCompletionNewParams, onText func(string)) (resp agent.ModelResponse, err error) {
	stream := m.chat.NewStreaming(ctx, params, option.WithMiddleware(a.middleware), option.WithMaxRetryDelay(m.maxDelay))
	defer stream.Close()

	var (
		text     strings.Builder
		calls    []*callAcc
		current  = map[int64]*callAcc{} // the latest call of each index
		finished bool
	)
	for stream.Next() {
		chunk := stream.Current()
		if chunk.JSON.Usage.Valid() {
			// Usage is usually one final chunk; servers that repeat it
			// report running totals, so the last one wins.
			resp.Usage = store.Usage{
				PromptTokens:     int(chunk.Usage.PromptTokens),
				CompletionTokens: int(chunk.Usage.CompletionTokens),
			}
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue // only one choice is asked for
			}
			for _, piece := range []string{ch.Delta.Content, ch.Delta.Refusal} {
				if piece == "" {
					continue
				}
				a.started = true
				text.WriteString(piece)
				onText(piece)
			}
			for _, d := range ch.Delta.ToolCalls {
				a.started = true
				idx := max(d.Index, 0) // some servers send -1 for a lone call
				c := current[idx]
				if c == nil || (d.ID != "" && c.id != "" && d.ID != c.id) {
					// A new call; a new id at a used index is a new call too
					// (servers that send every call whole at index 0).
					c = &callAcc{index: idx, seq: len(calls)}
					calls = append(calls, c)
					current[idx] = c
				}
				if c.id == "" {
					c.id = d.ID
				}
				if n := d.Function.Name; n != "" && n != c.name {
					c.name += n
				}
				c.args.WriteString(d.Function.Arguments)
			}
			if ch.FinishReason != "" {
				finished = true
			}
		}
	}
	if err := stream.Err(); err != nil {
		return resp, err
	}
	if a.status >= 300 {
		return resp, fmt.Errorf("unexpected HTTP status %d", a.status)
	}
	if !finished {
		return resp, errEndedEarly
	}
	resp.Text = text.String()
	slices.SortStableFunc(calls, func(a, b *callAcc) int {
		if a.index != b.index {
			return int(a.index - b.index)
		}
		return a.seq - b.seq
	})
	for _, c := range calls {
		if c.name == "" {
			return resp, &callError{fmt.Sprintf("openai: tool call %d (id %q) has no function name", c.index, c.id)}
		}
		args := strings.TrimSpace(c.args.String())
		if args == "" {
			args = "{}" // a call without parameters
		}
		if !json.Valid([]byte(args)) {
			return resp, badArgs(c.name, args)
		}
		resp.ToolCalls = append(resp.ToolCalls, store.ToolCall{ID: c.id, Name: c.name, Arguments: args})
	}
	return resp, nil
}

var errEndedEarly = errors.New("the stream ended before the model finished (no finish_reason)")

// callError is a tool call that came whole but cannot be used. Its text is
// the whole error: the stream did not break.
type callError struct{ msg string }

func (e *callError) Error() string { return e.msg }

// badArgs is the error of a tool call whose arguments are not JSON,
// quoting their start.
func badArgs(name, args string) *callError {
	if len(args) > maxArgsInError {
		args = args[:maxArgsInError] + "…"
	}
	return &callError{fmt.Sprintf("openai: tool call %s: arguments are not JSON: %q", name, args)}
}

// describe words a failure, without the API key.
func (m *Model) describe(err error, status int) string {
	var ce *callError
	if errors.As(err, &ce) {
		return m.scrub(err.Error())
	}
	var msg string
	var apiErr *oai.Error
	var streamErr *ssestream.StreamError
	switch {
	case status >= 300:
		msg = fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
		if errors.As(err, &apiErr) {
			if detail := strings.TrimSpace(apiErr.Message); detail != "" {
				msg += ": " + detail
			}
		}
	case errors.As(err, &streamErr):
		msg = "the server sent an error in the stream: " + streamErr.Message
	case errors.Is(err, errEndedEarly):
		msg = err.Error()
	case status != 0:
		msg = "the stream broke: " + err.Error()
	default:
		msg = "request failed: " + err.Error()
	}
	return m.scrub(fmt.Sprintf("openai: model %s: %s", m.model, msg))
}

// Error is a failed model call.
type Error struct {
	// Status is the HTTP status of the answer, 0 when none came (connection
	// refused); a stream that broke or sent an error event after a 200
	// keeps 200.
	Status int
	msg    string
	err    error
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.err }

// scrub removes the API key from s, in case a server echoes it.
func (m *Model) scrub(s string) string { return modelhttp.Scrub(s, m.apiKey) }
