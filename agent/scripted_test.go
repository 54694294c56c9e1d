package agent

import (
	"context"
	"errors"
	"slices"
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

// TestScriptedCalls: a toolCall entry's calls are more tool calls of the
// same response, with ids of their own; a call without a name, or calls on
// a text entry, are refused.
func TestScriptedCalls(t *testing.T) {
	f, err := ParseScript([]byte(`[{"kind":"toolCall","id":"a","name":"request_choices","arguments":"{}","calls":[{"name":"request_rating","arguments":"{}"},{"id":"z","name":"lookup"}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewScripted(f.Script)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Respond(context.Background(), ModelRequest{}, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range resp.ToolCalls {
		got = append(got, c.ID+":"+c.Name)
	}
	if want := []string{"a:request_choices", "call-2:request_rating", "z:lookup"}; !slices.Equal(got, want) {
		t.Errorf("calls = %v, want %v", got, want)
	}
	for _, bad := range []string{
		`[{"kind":"toolCall","name":"x","calls":[{"arguments":"{}"}]}]`,
		`[{"kind":"text","text":"hi","calls":[{"name":"x"}]}]`,
	} {
		if _, err := ParseScript([]byte(bad)); err == nil {
			t.Errorf("ParseScript(%s) = nil error", bad)
		}
	}
}

// FuzzParseScript: a script file, whatever it holds, is read or refused
// with an error, and a script that is read answers without panicking.
func FuzzParseScript(f *testing.F) {
	f.Add([]byte(`[{"kind":"toolCall","name":"request_choices","arguments":"{}","calls":[{"name":"lookup"}]},{"kind":"text","text":"done"}]`))
	f.Add([]byte(`{"mockLlmScript":[{"kind":"text","text":"hi"}],"server":{"tools":[{"name":"t","result":"r"}]}}`))
	f.Add([]byte(`[{"kind":"text","calls":[]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sf, err := ParseScript(data)
		if err != nil {
			return
		}
		for i := range sf.Script {
			sf.Script[i].DelayMs = 0
		}
		m, err := NewScripted(sf.Script)
		if err != nil {
			t.Fatalf("a parsed script is refused: %v", err)
		}
		for pos := range sf.Script {
			if _, err := m.Respond(context.Background(), ModelRequest{Position: pos}, func(string) {}); err != nil {
				t.Fatalf("Respond at %d: %v", pos, err)
			}
		}
	})
}
