package modeltest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/agent/modeltest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The fake server answers its path with its handlers in turn, the last one
// for every later request, records what came, and refuses other paths.
func TestServer(t *testing.T) {
	s := modeltest.NewServer(t, "/v1/x", modeltest.Status(429, `{"e":1}`, "Retry-After", "0"), modeltest.Stream("data: a\n\n", "data: b\n\n"))
	c := modeltest.Client(t)
	post := func(path, body string) (int, string, http.Header) {
		res, err := c.Post(s.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b), res.Header
	}
	if code, body, h := post("/v1/x", `{"n":0}`); code != 429 || body != `{"e":1}` || h.Get("Retry-After") != "0" || h.Get("Content-Type") != "application/json" {
		t.Errorf("first answer %d %q %v", code, body, h)
	}
	for i := 1; i <= 2; i++ {
		if code, body, h := post("/v1/x", `{"n":1}`); code != 200 || body != "data: a\n\ndata: b\n\n" || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
			t.Errorf("answer %d: %d %q %v", i, code, body, h)
		}
	}
	if code, _, _ := post("/v1/other", `{}`); code != 404 {
		t.Errorf("another path: %d, want 404", code)
	}
	if s.Count() != 3 || s.Request(t, 0)["n"] != float64(0) || string(s.Body(t, 2)) != `{"n":1}` || s.Header(1).Get("Content-Type") != "application/json" {
		t.Errorf("recorded %d requests: %s, %v", s.Count(), s.Body(t, 0), s.Header(1))
	}
}
