// Package modelhttp is what kindkit's model packages (agent/openai,
// agent/anthropic) share around their providers' SDKs: the checks of a
// base URL, the default HTTP client, the retry bound, the knowledge
// documents as prompt text, and the key kept out of error texts. The
// protocol of each provider stays in its package.
package modelhttp
