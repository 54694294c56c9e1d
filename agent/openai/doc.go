// Package openai is a agent.Model over any OpenAI-compatible
// chat-completions endpoint (OpenAI itself, Ollama, vLLM, llama.cpp's
// server, LM Studio, …), built on the official SDK
// github.com/openai/openai-go/v3.
//
// Every Respond is one streamed POST {BaseURL}/chat/completions:
//
//   - The request carries the optional system prompt, the turn's knowledge
//     documents (each cut to 4000 bytes) as a second system message when
//     there are any, then the history in
//     order (user → user message; assistant → assistant message with its
//     text and tool_calls; tool → tool message with tool_call_id), every
//     offered tool as a function tool whose parameters are the tool's JSON
//     Schema passed through, and stream_options.include_usage so servers
//     that can report usage do (usage is zero when they do not).
//   - Text deltas reach onText as they arrive. Tool calls are reassembled by
//     their index from argument pieces and returned in index order. Empty
//     arguments become {}; arguments that are not JSON are an error
//     ("openai: tool call <name>: arguments are not JSON: …"), which the
//     server turns into INTERNAL_ERROR.
//   - A stream must end with a finish_reason: a stream that is cut or ends
//     early is an error, never a silently truncated answer.
//
// Failures are errors, never panics or hangs (every wait honours ctx).
// Retries are the SDK's (option.WithMaxRetries): a request that got no
// answer, or a 408, 409, 429 or 5xx one — which always comes before the
// first delta — is sent again at most MaxRetries times, after the server's
// Retry-After or retry-after-ms, else after the SDK's exponential backoff
// from 0.5s; every delay is capped at 10s, and a server that asks for longer
// gets no retry. Nothing is retried once a delta has arrived, since its text
// already reached the person. A middleware (option.WithMiddleware) logs each
// retry as the SDK makes it, and Respond each failure: one slog line with
// the model, the HTTP status and the attempt. The API key and the
// conversation are never logged, and the key is scrubbed from error texts.
//
// The SDK's ChatCompletionAccumulator is deliberately not used: it rejects
// every chunk whose id differs from the first one, which some
// OpenAI-compatible servers do, and it sums usage over chunks; a small
// accumulator keyed by tool-call index is enough here.
package openai
