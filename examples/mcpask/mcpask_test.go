package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/internal/readmetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The example as a real process on stdio, driven by a go-sdk client whose
// person first gives two picks to the single-select question (asked again
// with the kind's error), then one; on both kinds of MCP session, and a
// declined form books nothing.
func TestMCPAsk(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "mcpask")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, c := range []struct {
		name, version string
		answers       []*mcp.ElicitResult
		want          string
		asked         int
	}{
		{"elicitation/create", "2025-11-25", []*mcp.ElicitResult{
			{Action: "accept", Content: map[string]any{"Slot.options": "Wed 14:30", "Slot.other": "or Friday"}},
			{Action: "accept", Content: map[string]any{"Slot.options": "Wed 14:30"}},
		}, "Booked a demo of SSO on Wed 14:30.", 2},
		{"input requests", "2026-07-28", []*mcp.ElicitResult{
			{Action: "accept", Content: map[string]any{"Slot.options": "Wed 14:30", "Slot.other": "or Friday"}},
			{Action: "accept", Content: map[string]any{"Slot.other": "Friday 9:00"}},
		}, "Booked a demo of SSO on Friday 9:00.", 2},
		{"declined", "", []*mcp.ElicitResult{{Action: "decline"}}, "Nothing is booked: no slot was picked.", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var messages []string
			handler := func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				mu.Lock()
				defer mu.Unlock()
				messages = append(messages, req.Params.Message)
				a := c.answers[0]
				c.answers = c.answers[1:]
				return a, nil
			}
			ctx := context.Background()
			cmd := exec.Command(bin)
			cmd.Stderr = os.Stderr
			client := mcp.NewClient(&mcp.Implementation{Name: "person", Version: "v0.0.1"}, &mcp.ClientOptions{ElicitationHandler: handler})
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: c.version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "book_demo", Arguments: map[string]any{"topic": "SSO"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != c.want || res.IsError {
				t.Errorf("result %+v, want %q", res.Content, c.want)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(messages) != c.asked {
				t.Errorf("asked %d times, want %d: %q", len(messages), c.asked, messages)
			}
			if c.asked == 2 && messages[1] != "to book your demo\n\nPlease check your answer: Slot: this question takes a single answer." {
				t.Errorf("asked again with %q", messages[1])
			}
		})
	}
}

// docs/mcp.md's snippet is this example's code, so it compiles.
func TestREADMESnippet(t *testing.T) {
	readmetest.HasFunc(t, "../../docs/mcp.md", "main.go", "func bookDemo(")
}
