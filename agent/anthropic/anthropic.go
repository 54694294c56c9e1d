package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/modelhttp"
	"github.com/kindkit/kindkit/store"
)

// DefaultBaseURL is Anthropic's API; the SDK appends v1/messages.
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultMaxRetries is how often a failed request is retried when
// Config.MaxRetries is zero.
const DefaultMaxRetries = modelhttp.DefaultMaxRetries

// DefaultMaxTokens bounds a response when Config.MaxTokens is zero.
const DefaultMaxTokens = 4096

const (
	maxArgsInError = 200             // bytes of bad tool input quoted in an error
	sdkMaxBackoff  = 8 * time.Second // the SDK's own cap of its exponential backoff
)

// Config configures a Model.
type Config struct {
	// BaseURL is the API's root, without /v1: the request goes to
	// {BaseURL}/v1/messages. Empty means DefaultBaseURL.
	BaseURL string
	// Model is the model name, e.g. claude-sonnet-4-5. Required.
	Model string
	// APIKey is the API key; empty sends none. It is never logged.
	APIKey string
	// System is an optional system prompt.
	System string
	// MaxTokens bounds each response (the API requires a bound): zero means
	// DefaultMaxTokens.
	MaxTokens int
	// MaxRetries bounds the SDK's retries of a request that got no answer,
	// or a 408, 409, 429 or 5xx (529 overloaded included) one (always before
	// the first delta): zero means DefaultMaxRetries, negative means none.
	MaxRetries int
	// HTTPClient makes the requests; nil means a client whose transport is
	// http.DefaultTransport's with a 10-minute response-header timeout.
	HTTPClient *http.Client
	// Logger receives one line per failure or retry; nil means slog.Default().
	Logger *slog.Logger
}

// Model is a agent.Model over Anthropic's Messages API. It is safe for
// concurrent use.
type Model struct {
	model      string
	system     string
	apiKey     string
	maxTokens  int
	maxRetries int
	messages   sdk.MessageService
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
		return nil, errors.New("anthropic: Config.Model is required (e.g. claude-sonnet-4-5)")
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	if err := modelhttp.CheckBaseURL("anthropic", base, "http(s)://host[:port][/path]"); err != nil {
		return nil, err
	}
	if cfg.MaxTokens < 0 {
		return nil, fmt.Errorf("anthropic: Config.MaxTokens %d: want a positive bound, or zero for %d", cfg.MaxTokens, DefaultMaxTokens)
	}
	maxTokens := cfg.MaxTokens
	if maxTokens == 0 {
		maxTokens = DefaultMaxTokens
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
	// The service is built from explicit options only. sdk.NewClient would
	// prepend DefaultClientOptions, which read ANTHROPIC_BASE_URL,
	// ANTHROPIC_CUSTOM_HEADERS and, without a key here, the whole credential
	// chain (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, profiles on disk, …);
	// NewMessageService prepends nothing. The SDK's OpenTelemetry spans are
	// turned off explicitly, since otherwise ANTHROPIC_OPEN_TELEMETRY* would
	// decide them, content mode included: kindkit traces its model calls
	// itself. The configuration here is the whole truth.
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(retries),
		option.WithoutOpenTelemetry(),
		option.WithOpenTelemetryPropagation(false),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	return &Model{
		model:      cfg.Model,
		system:     cfg.System,
		apiKey:     cfg.APIKey,
		maxTokens:  maxTokens,
		maxRetries: retries,
		messages:   sdk.NewMessageService(opts...),
		log:        log,
		maxDelay:   modelhttp.MaxDelay,
	}, nil
}

// Respond makes one streamed Messages API call; see the package doc.
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
		return agent.ModelResponse{}, fmt.Errorf("anthropic: %w", ctx.Err())
	}
	why := m.describe(err, a.status)
	m.log.Error("anthropic: model call failed", "model", m.model, "status", a.status, "attempt", a.n, "err", why)
	if a.n > 1 {
		why += fmt.Sprintf(" (after %d attempts)", a.n)
	}
	return agent.ModelResponse{}, &Error{Status: a.status, msg: why, err: err}
}

// turn is one message of the request being built: a role and its blocks.
type turn struct {
	user   bool
	blocks []sdk.ContentBlockParamUnion
}

// params builds the request body.
func (m *Model) params(req agent.ModelRequest) (sdk.MessageNewParams, error) {
	p := sdk.MessageNewParams{
		Model:     sdk.Model(m.model),
		MaxTokens: int64(m.maxTokens),
	}
	if m.system != "" {
		p.System = append(p.System, sdk.TextBlockParam{Text: m.system})
	}
	if len(req.Knowledge) > 0 {
		p.System = append(p.System, sdk.TextBlockParam{Text: modelhttp.KnowledgePrompt(req.Knowledge)})
	}
	// The API wants user and assistant messages to alternate, and every
	// tool_result in the user message right after its tool_use: blocks of
	// consecutive messages of one role (the results of several tool calls,
	// above all) go into one message.
	var turns []turn
	add := func(user bool, blocks ...sdk.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(turns); n > 0 && turns[n-1].user == user {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
			return
		}
		turns = append(turns, turn{user: user, blocks: blocks})
	}
	for i, msg := range req.History {
		if msg == nil {
			continue
		}
		switch msg.Role {
		case store.RoleUser:
			if msg.Text != "" { // the API rejects empty text blocks
				add(true, sdk.NewTextBlock(msg.Text))
			}
		case store.RoleAssistant:
			var blocks []sdk.ContentBlockParamUnion
			if msg.Text != "" {
				blocks = append(blocks, sdk.NewTextBlock(msg.Text))
			}
			for _, c := range msg.ToolCalls {
				args := strings.TrimSpace(c.Arguments)
				if args == "" {
					args = "{}"
				}
				var input map[string]json.RawMessage
				if err := json.Unmarshal([]byte(args), &input); err != nil || input == nil {
					return p, fmt.Errorf("anthropic: history message %d: tool call %s: arguments are not a JSON object", i, c.Name)
				}
				blocks = append(blocks, sdk.NewToolUseBlock(c.ID, json.RawMessage(args), c.Name))
			}
			add(false, blocks...)
		case store.RoleTool:
			if msg.ToolCallID == "" {
				return p, fmt.Errorf("anthropic: history message %d: a tool result without a tool call id", i)
			}
			r := sdk.ToolResultBlockParam{ToolUseID: msg.ToolCallID}
			if msg.Text != "" {
				r.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: msg.Text}}}
			}
			if msg.IsError {
				r.IsError = param.NewOpt(true)
			}
			add(true, sdk.ContentBlockParamUnion{OfToolResult: &r})
		default:
			// Only user, assistant and tool messages are the model's
			// conversation; anything else is not sent.
		}
	}
	for _, t := range turns {
		if t.user {
			p.Messages = append(p.Messages, sdk.NewUserMessage(t.blocks...))
		} else {
			p.Messages = append(p.Messages, sdk.NewAssistantMessage(t.blocks...))
		}
	}
	for _, t := range req.Tools {
		schema := json.RawMessage(`{"type":"object"}`)
		if len(bytes.TrimSpace(t.Parameters)) > 0 {
			var members map[string]json.RawMessage
			if err := json.Unmarshal(t.Parameters, &members); err != nil || members == nil {
				return p, fmt.Errorf("anthropic: tool %s: parameters are not a JSON object", t.Name)
			}
			schema = t.Parameters
		}
		// The schema is passed through as it is, so nothing of it is
		// re-encoded.
		tool := sdk.ToolParam{Name: t.Name, InputSchema: param.Override[sdk.ToolInputSchemaParam](schema)}
		if t.Description != "" {
			tool.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: &tool})
	}
	return p, nil
}

// block is one content block of the response being reassembled.
type block struct {
	index int64
	kind  string // text, tool_use, or what else the API sends (ignored)
	id    string
	name  string
	start string // the tool_use input of content_block_start
	input strings.Builder
}

// attempts is what the HTTP requests of one Respond learnt besides their
// result; the SDK makes them, retrying as Config.MaxRetries allows.
type attempts struct {
	m      *Model
	n      int    // requests made
	status int    // the last answer's HTTP status, 0 when none came
	why    string // the last request's failure, for the retry log
}

// middleware sees every request the SDK makes. It records the status and
// logs a retry when the SDK sends the request again: only then is it known
// that the SDK retries rather than gives up. The log line names the model,
// status and attempt, never the key, the request or the visitor's text.
// It also caps the SDK's retry delay (see capDelay).
func (a *attempts) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	if a.n > 0 {
		a.m.log.Warn("anthropic: model call failed, retrying", "model", a.m.model, "status", a.status,
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
		a.why = statusLine(res.StatusCode)
		a.capDelay(res)
	default:
		a.status = res.StatusCode
		// A successful answer is read, never sent again.
		res.Header.Del("X-Should-Retry")
	}
	return res, err
}

// capDelay bounds the wait before the SDK's next attempt by maxDelay. The
// SDK has no option for it: it waits what Retry-After-Ms or Retry-After
// asks, however long, else 0.5s·2^retry (at most 8s, less up to a quarter
// of jitter). So a server that asks for longer than the cap is told, by the
// x-should-retry header the SDK obeys, that there is no retry; and when the
// SDK's own backoff would exceed the cap (only a cap below 8s, as in tests),
// a Retry-After-Ms of the cap takes its place. The response comes from the
// transport and is the SDK's alone, so changing its headers is safe.
func (a *attempts) capDelay(res *http.Response) {
	if d, ok := retryAfter(res.Header); ok {
		if d > a.m.maxDelay {
			res.Header.Set("X-Should-Retry", "false")
		}
		return
	}
	backoff := time.Duration(0.5 * float64(time.Second) * math.Pow(2, float64(a.n-1)))
	if min(backoff, sdkMaxBackoff) > a.m.maxDelay {
		res.Header.Set("Retry-After-Ms", strconv.FormatInt(a.m.maxDelay.Milliseconds(), 10))
	}
}

// retryAfter is the wait a response asks for, read as the SDK reads it.
func retryAfter(h http.Header) (time.Duration, bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			return time.Duration(s * float64(time.Second)), true
		}
		if t, err := time.Parse(time.RFC1123, v); err == nil {
			return time.Until(t), true
		}
	}
	return 0, false
}

// attempt makes the request, with the SDK's retries, and reads its stream.
func (m *Model) attempt(ctx context.Context, a *attempts, params sdk.MessageNewParams, onText func(string)) (resp agent.ModelResponse, err error) {
	stream := m.messages.NewStreaming(ctx, params, option.WithMiddleware(a.middleware))
	defer stream.Close()

	var (
		text     strings.Builder
		blocks   []*block
		byIndex  = map[int64]*block{}
		stopped  bool // a message_delta with a stop_reason arrived
		finished bool // then message_stop
	)
	for !finished && stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "message_start":
			u := ev.Message.Usage
			resp.Usage.PromptTokens = int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens)
			resp.Usage.CompletionTokens = int(u.OutputTokens)
		case "content_block_start":
			cb := ev.ContentBlock
			if byIndex[ev.Index] != nil {
				return resp, fmt.Errorf("content block %d started twice", ev.Index)
			}
			b := &block{index: ev.Index, kind: cb.Type, id: cb.ID, name: cb.Name}
			if cb.Type == "tool_use" {
				b.start = strings.TrimSpace(cb.JSON.Input.Raw())
			}
			blocks = append(blocks, b)
			byIndex[ev.Index] = b
			if cb.Type == "text" && cb.Text != "" {
				text.WriteString(cb.Text)
				onText(cb.Text)
			}
		case "content_block_delta":
			b := byIndex[ev.Index]
			if b == nil {
				return resp, fmt.Errorf("a delta for content block %d, which did not start", ev.Index)
			}
			switch ev.Delta.Type {
			case "text_delta":
				if ev.Delta.Text != "" {
					text.WriteString(ev.Delta.Text)
					onText(ev.Delta.Text)
				}
			case "input_json_delta":
				if b.kind != "tool_use" {
					return resp, fmt.Errorf("tool input for content block %d, a %s block", ev.Index, b.kind)
				}
				b.input.WriteString(ev.Delta.PartialJSON)
			}
		case "message_delta":
			// The usage here is cumulative; input tokens are repeated
			// only by some versions of the API.
			u := ev.Usage
			if in := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens; in > 0 {
				resp.Usage.PromptTokens = int(in)
			}
			resp.Usage.CompletionTokens = int(u.OutputTokens)
			if ev.Delta.StopReason != "" {
				stopped = true
			}
		case "message_stop":
			finished = true
		}
	}
	if err := stream.Err(); err != nil {
		return resp, err
	}
	if a.status >= 300 {
		return resp, fmt.Errorf("unexpected HTTP status %d", a.status)
	}
	if !finished || !stopped {
		return resp, errEndedEarly
	}
	resp.Text = text.String()
	for _, b := range blocks {
		if b.kind != "tool_use" {
			continue
		}
		if b.name == "" {
			return resp, &callError{fmt.Sprintf("anthropic: tool call %d (id %q) has no name", b.index, b.id)}
		}
		input := strings.TrimSpace(b.input.String())
		if input == "" {
			input = b.start
		}
		if input == "" {
			input = "{}" // a call without parameters
		}
		if !json.Valid([]byte(input)) {
			return resp, badInput(b.name, input)
		}
		resp.ToolCalls = append(resp.ToolCalls, store.ToolCall{ID: b.id, Name: b.name, Arguments: input})
	}
	return resp, nil
}

var errEndedEarly = errors.New("the stream ended before the model finished (no message_delta with a stop_reason, then message_stop)")

// callError is a tool call that came whole but cannot be used. Its text is
// the whole error: the stream did not break.
type callError struct{ msg string }

func (e *callError) Error() string { return e.msg }

// badInput is the error of a tool call whose input is not JSON, quoting
// the input's start.
func badInput(name, input string) *callError {
	if len(input) > maxArgsInError {
		input = input[:maxArgsInError] + "…"
	}
	return &callError{fmt.Sprintf("anthropic: tool call %s: input is not JSON: %q", name, input)}
}

// describe words a failure, without the API key.
func (m *Model) describe(err error, status int) string {
	var ce *callError
	if errors.As(err, &ce) {
		return m.scrub(err.Error())
	}
	var msg string
	var apiErr *sdk.Error
	switch {
	case status >= 300:
		msg = statusLine(status)
		if errors.As(err, &apiErr) {
			if detail := apiDetail(apiErr); detail != "" {
				msg += ": " + detail
			}
		}
	case errors.As(err, &apiErr):
		// An error event in a stream that began with 200.
		msg = "the server sent an error in the stream"
		if detail := apiDetail(apiErr); detail != "" {
			msg += ": " + detail
		}
	case errors.Is(err, errEndedEarly):
		msg = err.Error()
	case status != 0:
		msg = "the stream broke: " + err.Error()
	default:
		msg = "request failed: " + err.Error()
	}
	return m.scrub(fmt.Sprintf("anthropic: model %s: %s", m.model, msg))
}

// statusLine words an HTTP status, Anthropic's 529 included.
func statusLine(status int) string {
	text := http.StatusText(status)
	if status == 529 {
		text = "Overloaded"
	}
	if text == "" {
		return fmt.Sprintf("HTTP %d", status)
	}
	return fmt.Sprintf("HTTP %d %s", status, text)
}

// apiDetail is an API error's type and message, e.g. "overloaded_error:
// Overloaded".
func apiDetail(e *sdk.Error) string {
	typ, detail := string(e.Type()), strings.TrimSpace(e.Message)
	switch {
	case typ != "" && detail != "":
		return typ + ": " + detail
	case detail != "":
		return detail
	}
	return typ
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
