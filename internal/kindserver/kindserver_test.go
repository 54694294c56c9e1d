package kindserver

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFlags(t *testing.T) {
	for name, c := range map[string]struct {
		args []string
		code int
		says string
	}{
		"unknown flag":       {[]string{"-nope"}, 2, "flag provided but not defined"},
		"stray argument":     {[]string{"-store", "memory", "extra"}, 2, "unexpected argument"},
		"bad store":          {[]string{"-store", "redis://x"}, 1, "want memory, sqlite:PATH or postgres"},
		"unknown model":      {[]string{"-store", "memory", "-model", "gpt"}, 2, "unknown -model"},
		"scripted no script": {[]string{"-store", "memory", "-model", "scripted"}, 2, "needs -script"},
		"missing script":     {[]string{"-store", "memory", "-script", "/nonexistent.json"}, 1, "load script"},
		"bad openai url":     {[]string{"-store", "memory", "-model", "openai", "-openai-base-url", "ftp://x"}, 2, "base URL"},
		"bad address":        {[]string{"-store", "memory", "-addr", "256.0.0.1:1"}, 1, "listen"},
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := Run(context.Background(), c.args, &stdout, &stderr); code != c.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, c.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.says) {
				t.Errorf("stderr does not say %q:\n%s", c.says, stderr.String())
			}
		})
	}
}

// Run serves until its context ends, then drains and returns 0.
func TestRunAndDrain(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr bytes.Buffer
	done := make(chan int)
	go func() { done <- Run(ctx, []string{"-store", "memory", "-addr", "127.0.0.1:0"}, &stdout, &stderr) }()
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if !strings.HasPrefix(stdout.String(), "kindkit listening on ws://127.0.0.1:") {
		t.Errorf("stdout %q", stdout.String())
	}
}

// The chat page, /kinds, /healthz and /ws are served on one port.
func TestRoutes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan int)
	go func() { done <- Run(ctx, []string{"-store", "memory", "-addr", "127.0.0.1:0"}, out, io.Discard) }()
	defer func() { cancel(); <-done }()
	var base string
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
		if _, rest, ok := strings.Cut(out.String(), "(chat page: "); ok {
			base = strings.TrimSuffix(strings.TrimSpace(rest), ")")
			break
		}
	}
	if base == "" {
		t.Fatal("no chat page address printed")
	}
	for path, want := range map[string]string{"": "<html", "kinds": `"toolName":"request_choices"`, "healthz": "ok"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET /%s: %d, body lacks %q", path, resp.StatusCode, want)
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
