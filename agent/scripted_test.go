package agent

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestScriptedDelay(t *testing.T) {
	f, err := ParseScript([]byte(`[{"kind":"text","text":"slow","delayMs":200},{"kind":"text","text":"fast"}]`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewScripted(f.Script)
	if err != nil {
		t.Fatal(err)
	}

	begin := time.Now()
	resp, err := m.Respond(context.Background(), ModelRequest{Position: 0}, func(string) {})
	if err != nil || resp.Text != "slow" || resp.Position != 1 {
		t.Fatalf("delayed entry: %+v, %v", resp, err)
	}
	if took := time.Since(begin); took < 200*time.Millisecond {
		t.Errorf("a delayMs 200 entry answered after %v", took)
	}

	// A cancelled context ends the wait early, with nothing streamed.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	begin = time.Now()
	streamed := false
	_, err = m.Respond(ctx, ModelRequest{Position: 0}, func(string) { streamed = true })
	if !errors.Is(err, context.Canceled) || streamed {
		t.Fatalf("cancelled wait: err %v, streamed %v", err, streamed)
	}
	if took := time.Since(begin); took > 150*time.Millisecond {
		t.Errorf("the cancelled wait returned after %v", took)
	}

	// Without delayMs the entry answers at once.
	begin = time.Now()
	if resp, err := m.Respond(context.Background(), ModelRequest{Position: 1}, func(string) {}); err != nil || resp.Text != "fast" {
		t.Fatalf("undelayed entry: %+v, %v", resp, err)
	}
	if took := time.Since(begin); took > 100*time.Millisecond {
		t.Errorf("an entry without delayMs answered after %v", took)
	}
}

func TestScriptedNegativeDelay(t *testing.T) {
	if _, err := ParseScript([]byte(`[{"kind":"text","text":"x","delayMs":-1}]`)); err == nil {
		t.Fatal("a negative delayMs was accepted")
	}
}

// A toolCall entry's text is said before the call, in the same response.
func TestScriptedWordsBeforeCall(t *testing.T) {
	m, err := NewScripted([]ScriptEntry{{Kind: "toolCall", Text: "First, a question.", ID: "c1", Name: "request_choices", Arguments: `{}`}})
	if err != nil {
		t.Fatal(err)
	}
	var said string
	resp, err := m.Respond(context.Background(), ModelRequest{}, func(s string) { said += s })
	if err != nil || said != "First, a question." || resp.Text != said || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "request_choices" {
		t.Fatalf("said %q, responded %+v, %v", said, resp, err)
	}
}
