package kindserver

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/gen/identityintakegen"
	"github.com/kindkit/kindkit/internal/syncbuf"
	"github.com/kindkit/kindkit/internal/wstest"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/kinds/identityintake"
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
		"bad anthropic url":  {[]string{"-store", "memory", "-model", "anthropic", "-anthropic-base-url", "https://u:p@x"}, 2, "must not carry credentials"},
		"bad address":        {[]string{"-store", "memory", "-addr", "256.0.0.1:1"}, 1, "listen"},
		"missing knowledge":  {[]string{"-store", "memory", "-knowledge", "/nonexistent"}, 1, "load knowledge"},
		"bad phone region":   {[]string{"-store", "memory", "-addr", "256.0.0.1:1", "-phone-region", "UK"}, 2, `unknown phone region "UK"`},
		"knowledge twice":    {[]string{"-store", "memory", "-knowledge", "/tmp", "-script", "testdata/knowledge-script.json"}, 2, "use one"},
		"bad on-expiry":      {[]string{"-store", "memory", "-on-expiry", "later"}, 2, "-on-expiry must be no_response or end_turn"},
		"on-expiry default":  {[]string{"-store", "memory", "-on-expiry", "default"}, 2, "-on-expiry must be no_response or end_turn"},
		"unknown decision":   {[]string{"-store", "memory", "-tool-decisions", "approve,reject,maybe"}, 2, "-tool-decisions must name approve and reject"},
		"no reject":          {[]string{"-store", "memory", "-tool-decisions", "approve,edit"}, 2, "-tool-decisions must name approve and reject"},
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

// -phone-region reaches identity_intake: a national number is read in it,
// and the other kinds are all still there.
func TestPhoneRegion(t *testing.T) {
	for region, want := range map[string]string{identityintake.DefaultRegion: "", "GB": "+447911123456"} {
		t.Run(region, func(t *testing.T) {
			cat, err := loadKinds(region)
			if err != nil {
				t.Fatal(err)
			}
			all, err := kinds.All()
			if err != nil {
				t.Fatal(err)
			}
			if len(cat.Kinds()) != len(all.Kinds()) {
				t.Errorf("%d kinds, want %d", len(cat.Kinds()), len(all.Kinds()))
			}
			k, _ := cat.Kind(identityintakegen.Name)
			got, errs := k.Validate(nil, []byte(`{"phone":"07911 123456"}`))
			if want == "" && len(errs) != 1 || want != "" && string(got) != `{"phone":"`+want+`"}` {
				t.Errorf("Validate = %s, %v; want %q", got, errs, want)
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

// Knowledge from -knowledge DIR, or from a script's server.knowledge,
// reaches the turns: eventual_response cites the matching document.
func TestKnowledge(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"returns.md": "Returns are free within 30 days.", "hours.txt": "Open 9 to 5."} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, args := range map[string][]string{
		"-knowledge": {"-store", "memory", "-knowledge", dir, "-script", "testdata/text-script.json"},
		"script":     {"-store", "memory", "-script", "testdata/knowledge-script.json"},
	} {
		t.Run(name, func(t *testing.T) {
			base, _ := serve(t, args...)
			c := wstest.Dial(t, "ws"+strings.TrimPrefix(base, "http")+"ws")
			c.Send(`{"action":"create_conversation_session","requestId":"r","agentId":"a"}`)
			sid := wstest.Path(c.Expect("immediate_response")[0], "data", "sessionId").(string)
			c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"are returns free?"}`)
			c.Expect("immediate_response")
			_, ev := c.Turn()
			cites, _ := wstest.Path(ev, "data", "data", "citations").([]any)
			if len(cites) == 0 || wstest.Path(cites[0], "id") != "returns.md" {
				t.Errorf("citations %v, want returns.md first", cites)
			}
		})
	}
}

// serve runs kindserver with args on a free port until the test ends and
// returns the chat page's address (http://host:port/), from the line it
// prints last, and all it printed.
func serve(t *testing.T, args ...string) (base, stdout string) {
	t.Helper()
	base, stdout, _ = serveLogged(t, args...)
	return base, stdout
}

// serveLogged is serve that also returns what kindserver logs.
func serveLogged(t *testing.T, args ...string) (base, stdout string, logs *syncbuf.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncbuf.Buffer{}
	errs := &syncbuf.Buffer{}
	done := make(chan int)
	go func() { done <- Run(ctx, append(args, "-addr", "127.0.0.1:0"), out, errs) }()
	t.Cleanup(func() { cancel(); <-done })
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
		if _, rest, ok := strings.Cut(out.String(), "(chat page: "); ok {
			return strings.TrimSuffix(strings.TrimSpace(rest), ")"), out.String(), errs
		}
	}
	t.Fatalf("no chat page address printed; stderr:\n%s", errs.String())
	return "", "", nil
}

// The chat page, the inbox page, /kinds, /healthz, /ws and /agui are
// served on one port.
func TestRoutes(t *testing.T) {
	base, _ := serve(t, "-store", "memory")
	for path, want := range map[string]string{"": "<html", "inbox": `src="static/inbox.js"`, "kinds": `"toolName":"request_choices"`, "healthz": "ok",
		"metrics": "kindkit_connections_open 0", "agui/capabilities": `"interrupts":true`} {
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

// The inbox's calls are served; without -auth-secret they say the inbox
// needs auth, with it they ask for a bearer token.
func TestInboxRoutes(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-store", "memory"}, 404, `"inbox_off"`},
		{[]string{"-store", "memory", "-auth-secret", "kindserver-inbox-test-secret-0123456789"}, 401, `"unauthorized"`},
	} {
		base, _ := serve(t, c.args...)
		for _, call := range []struct{ method, path string }{{"GET", "inbox/asks"}, {"POST", "inbox/submit"}} {
			req, _ := http.NewRequest(call.method, base+call.path, strings.NewReader("{}"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.code || !strings.Contains(string(body), c.want) {
				t.Errorf("%v: %s /%s: %d %s, want %d %s", c.args, call.method, call.path, resp.StatusCode, body, c.code, c.want)
			}
		}
	}
}

// -metrics=false takes /metrics off the main address.
func TestMetricsOff(t *testing.T) {
	base, _ := serve(t, "-store", "memory", "-metrics=false")
	resp, err := http.Get(base + "metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(body), "kindkit_") {
		t.Errorf("GET /metrics with -metrics=false: %d, %.80s", resp.StatusCode, body)
	}
}

// /debug/stats and /debug/pprof/ are served on -debug-addr only, never on
// the main address.
func TestDebugAddr(t *testing.T) {
	base, stdout := serve(t, "-store", "memory", "-debug-addr", "127.0.0.1:0")
	_, rest, ok := strings.Cut(stdout, "kindkit debug listening on ")
	if !ok {
		t.Fatalf("no debug address printed:\n%s", stdout)
	}
	debug, _, _ := strings.Cut(rest, "debug/stats")
	plain, _ := serve(t, "-store", "memory")
	for url, want := range map[string]int{
		base + "debug/pprof/": 404, base + "debug/stats": 404,
		debug + "debug/pprof/": 200, debug + "debug/stats": 200,
		plain + "debug/pprof/": 404, plain + "debug/stats": 404,
	} {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", url, resp.StatusCode, want)
		}
	}
}

// A store URL's password, in its user info or as a query parameter, is
// never printed, not even when opening the store fails.
func TestStorePasswordNotLogged(t *testing.T) {
	for _, dsn := range []string{
		"postgres://u:hunter2@127.0.0.1:1/db?sslmode=disable",
		"postgres://u@127.0.0.1:1/db?password=hunter2&sslmode=disable",
		"postgres://u@127.0.0.1:1/db?sslmode=disable&password=hunter2&connect_timeout=1",
	} {
		var stdout, stderr bytes.Buffer
		if code := Run(context.Background(), []string{"-store", dsn}, &stdout, &stderr); code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		if strings.Contains(stderr.String()+stdout.String(), "hunter2") {
			t.Errorf("the password is printed:\n%s", stderr.String())
		}
		if !strings.Contains(stderr.String(), "open store") {
			t.Errorf("no open-store error:\n%s", stderr.String())
		}
	}
}

// Bad webhook settings stop kindserver at start with an error that names
// neither the key nor the URL (either may hold a secret).
func TestWebhookFlags(t *testing.T) {
	const key = "whsec_c2hvcnQ=" // "short": too short a secret
	for name, c := range map[string]struct {
		args   []string
		secret string
		says   string
	}{
		"no secret":   {[]string{"-webhook-url", "https://example.com/hook"}, "", "-webhook-url needs $KINDKIT_WEBHOOK_SECRET"},
		"bad secret":  {[]string{"-webhook-url", "https://example.com/hook"}, key, "KINDKIT_WEBHOOK_SECRET: key 1 of 1: whsec_…: a secret of 5 bytes; want 24 to 64"},
		"public key":  {[]string{"-webhook-url", "https://example.com/hook"}, "whpk_AAAA", "whpk_ public key verifies signatures"},
		"bad url":     {[]string{"-webhook-url", "ftp://example.com/hook?token=Tok3n"}, testWebhookSecret, "-webhook-url: webhook: endpoint 1: want an absolute http:// or https:// URL"},
		"twice":       {[]string{"-webhook-url", "https://example.com/a?t=Tok3n", "-webhook-url", "https://example.com/a?t=Tok3n"}, testWebhookSecret, "endpoint 2 (https://example.com) is given twice"},
		"bad timeout": {[]string{"-webhook-url", "https://example.com/hook", "-webhook-timeout", "0s"}, testWebhookSecret, "-webhook-timeout must be positive"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("KINDKIT_WEBHOOK_SECRET", c.secret)
			var stdout, stderr bytes.Buffer
			if code := Run(context.Background(), append([]string{"-store", "memory"}, c.args...), &stdout, &stderr); code != 2 {
				t.Errorf("exit %d, want 2; stderr:\n%s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.says) {
				t.Errorf("stderr does not say %q:\n%s", c.says, stderr.String())
			}
			for _, secret := range []string{"c2hvcnQ", testWebhookSecret[6:], "Tok3n"} {
				if strings.Contains(stderr.String(), secret) {
					t.Errorf("stderr holds %q:\n%s", secret, stderr.String())
				}
			}
		})
	}
}

const testWebhookSecret = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3" // 24 bytes

// Bad answer-link settings stop kindserver at start with an error that
// does not hold the secret.
func TestLinkFlags(t *testing.T) {
	for name, c := range map[string]struct {
		args   []string
		secret string
		says   string
	}{
		"no secret":     {[]string{"-public-url", "https://chat.example.com"}, "", "-public-url makes answer links, which need $KINDKIT_LINK_SECRET"},
		"short secret":  {[]string{"-public-url", "https://chat.example.com"}, "Sh0rtSecr3t", "KINDKIT_LINK_SECRET: link: secret 1 is 11 bytes, want at least 32"},
		"relative url":  {[]string{"-public-url", "chat.example.com/x"}, testLinkSecret, "-public-url must be an absolute http or https URL"},
		"url and query": {[]string{"-public-url", "https://chat.example.com/?a=b"}, testLinkSecret, "-public-url must be an absolute http or https URL"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("KINDKIT_LINK_SECRET", c.secret)
			var stdout, stderr bytes.Buffer
			if code := Run(context.Background(), append([]string{"-store", "memory"}, c.args...), &stdout, &stderr); code != 2 {
				t.Errorf("exit %d, want 2; stderr:\n%s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.says) {
				t.Errorf("stderr does not say %q:\n%s", c.says, stderr.String())
			}
			for _, secret := range []string{"Sh0rtSecr3t", testLinkSecret} {
				if strings.Contains(stderr.String(), secret) {
					t.Errorf("stderr holds %q:\n%s", secret, stderr.String())
				}
			}
		})
	}
}

const testLinkSecret = "kindserver-test-link-secret-0123456789"
