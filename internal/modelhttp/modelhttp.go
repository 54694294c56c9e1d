package modelhttp

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kindkit/kindkit/knowledge"
)

const (
	// DefaultMaxRetries is how often a failed request is retried when a
	// model's Config.MaxRetries is zero.
	DefaultMaxRetries = 3
	// MaxDelay caps every retry delay; a longer Retry-After is not waited
	// for.
	MaxDelay = 10 * time.Second
	// responseHeaderTimeout is the default client's wait for response
	// headers.
	responseHeaderTimeout = 10 * time.Minute
	// maxDocBytes bounds each document in the prompt, so a large knowledge
	// file cannot crowd out the conversation.
	maxDocBytes = 4000
)

// CheckBaseURL checks a provider's base URL: http(s) with a host, and no
// credentials in it (they belong in the key). want says the URL's shape in
// the error.
func CheckBaseURL(provider, base, want string) error {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s: base URL %q: want %s", provider, base, want)
	}
	if u.User != nil {
		return errors.New(provider + ": the base URL must not carry credentials; set Config.APIKey")
	}
	return nil
}

// HTTPClient is the default client of a model: http.DefaultTransport's
// settings, with a bound on the wait for response headers.
func HTTPClient() *http.Client {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.ResponseHeaderTimeout = responseHeaderTimeout
		return &http.Client{Transport: t}
	}
	return &http.Client{}
}

// Retries is a Config.MaxRetries as the SDK takes it: zero means
// DefaultMaxRetries, negative none.
func Retries(n int) int {
	switch {
	case n == 0:
		return DefaultMaxRetries
	case n < 0:
		return 0
	}
	return n
}

// KnowledgePrompt presents a turn's knowledge documents to the model, each
// cut to maxDocBytes.
func KnowledgePrompt(docs []knowledge.Doc) string {
	var b strings.Builder
	b.WriteString("Reference documents found for the visitor's message. Ground your answer in them when they are relevant; do not invent what they do not say.")
	for _, d := range docs {
		content := d.Content
		if len(content) > maxDocBytes {
			content = strings.ToValidUTF8(content[:maxDocBytes], "") + " …"
		}
		fmt.Fprintf(&b, "\n\n[%s]\n%s", d.Source, content)
	}
	return b.String()
}

// Scrub removes key from s, in case a server echoes it.
func Scrub(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}
