// Package anthropic is a agent.Model over Anthropic's Messages API (Claude),
// built on the official SDK github.com/anthropics/anthropic-sdk-go/v2.
//
// Every Respond is one streamed POST {BaseURL}/v1/messages ("stream": true):
//
//   - The request carries max_tokens (Config.MaxTokens, default 4096); as
//     system text blocks, the optional system prompt and, when there are
//     any, the turn's knowledge documents (each cut to 4000 bytes); then
//     the history in order (user → a user message with a text block;
//     assistant → an assistant message with its text block and a tool_use
//     block per call, whose input is the stored JSON arguments, {} when
//     empty; tool → a user message with a tool_result block carrying
//     tool_use_id, the result as text and is_error). The API wants user
//     and assistant messages to alternate, so consecutive messages of one
//     role are merged into one message: the results of several tool calls
//     become one user message. Every offered tool is a tool whose
//     input_schema is the tool's JSON Schema passed through unchanged
//     ({"type":"object"} for a tool without parameters).
//   - Text deltas (text_delta) reach onText as they arrive. Tool calls are
//     reassembled per content block index from their input_json_delta
//     pieces and returned in block order. Input that is not JSON is an
//     error ("anthropic: tool call <name>: input is not JSON: …"), which
//     the server turns into INTERNAL_ERROR. Usage is message_start's input
//     tokens (cache tokens included) and message_delta's output tokens.
//   - A stream must end with message_stop after a message_delta with a
//     stop_reason: a stream that is cut or ends early is an error, never a
//     silently truncated answer. An error event in the stream (say
//     overloaded_error) is an error too; ping events are ignored.
//
// Failures are errors, never panics or hangs (every wait honours ctx).
// Retries are the SDK's (option.WithMaxRetries): a request that got no
// answer, or a 408, 409, 429 or 5xx one (529 overloaded included) — which
// always comes before the first delta — is sent again at most MaxRetries
// times, after the server's retry-after-ms or Retry-After, else after the
// SDK's exponential backoff from 0.5s (at most 8s). The SDK has no option
// to cap its delays, so a middleware (option.WithMiddleware) does it: a
// server that asks for longer than 10s is answered, through the
// x-should-retry header the SDK obeys, with no retry, and the SDK's own
// backoff never exceeds the cap. Nothing is retried once the stream has
// begun, since its text may already have reached the person. The same
// middleware logs each retry as the SDK makes it, and Respond each failure:
// one slog line with the model, the HTTP status and the attempt. The API key
// and the conversation are never logged, and the key is scrubbed from error
// texts.
//
// The client is built from explicit options only: the SDK's NewClient
// would read ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_CUSTOM_HEADERS,
// profiles on disk and more from the environment, so the package builds the
// message service directly, and turns the SDK's own OpenTelemetry spans off
// (which ANTHROPIC_OPEN_TELEMETRY* would otherwise decide; kindkit traces its
// model calls itself). The key is sent the way the SDK sends it
// (Authorization: Bearer).
package anthropic
