package agent

import (
	"strings"
	"testing"
)

// submit_interaction is built once per set of kinds: a kept one costs a
// turn no allocation, and each set gets its own enum.
func TestSubmitToolKept(t *testing.T) {
	e := &Engine{submitTools: map[string]Tool{}}
	both := e.submitTool([]string{"choices", "rating"})
	if !strings.Contains(string(both.Parameters), `["choices","rating"]`) {
		t.Fatalf("submit tool for choices and rating: %s", both.Parameters)
	}
	if one := e.submitTool([]string{"choices"}); !strings.Contains(string(one.Parameters), `["choices"]`) {
		t.Errorf("submit tool for choices: %s", one.Parameters)
	}
	if n := testing.AllocsPerRun(100, func() {
		var names [2]string
		kinds := append(names[:0], "choices", "rating")
		if e.submitTool(kinds).Name != SubmitToolName {
			t.Fatal("not the submit tool")
		}
	}); n != 0 {
		t.Errorf("a kept submit tool cost %v allocations, want none", n)
	}
}
