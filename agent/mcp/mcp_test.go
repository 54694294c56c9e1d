package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/mcptest"
)

// These tests run the reference MCP server from npm
// (@modelcontextprotocol/server-everything; scripts/mcp.sh installs it).

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func everything(t *testing.T) Source {
	t.Helper()
	src, err := ParseSource("everything=node " + mcptest.Everything(t) + " stdio")
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func start(t *testing.T) *Server {
	t.Helper()
	s, err := Start(context.Background(), everything(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func tool(t *testing.T, s *Server, name string) agent.HostTool {
	t.Helper()
	for _, ht := range s.Tools() {
		if ht.Name == name {
			return ht
		}
	}
	var names []string
	for _, ht := range s.Tools() {
		names = append(names, ht.Name)
	}
	t.Fatalf("no tool %s among %v", name, names)
	return agent.HostTool{}
}

func TestParseSource(t *testing.T) {
	for in, want := range map[string]Source{
		"fs=npx -y server-fs /tmp":     {Name: "fs", Command: []string{"npx", "-y", "server-fs", "/tmp"}},
		"api=https://mcp.example/mcp":  {Name: "api", URL: "https://mcp.example/mcp"},
		"my-tools=./bin/tools --fast ": {Name: "my-tools", Command: []string{"./bin/tools", "--fast"}},
	} {
		got, err := ParseSource(in)
		if err != nil || got.Name != want.Name || got.URL != want.URL || !slices.Equal(got.Command, want.Command) {
			t.Errorf("ParseSource(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "noequals", "=cmd", "a b=cmd", "two__under=cmd", "x=", "x=   "} {
		if _, err := ParseSource(bad); err == nil {
			t.Errorf("ParseSource(%q) accepted", bad)
		}
	}
}

func TestToolName(t *testing.T) {
	if got := ToolName("fs", "read.file/v2"); got != "fs__read_file_v2" {
		t.Errorf("ToolName = %q", got)
	}
	if got := ToolName("fs", strings.Repeat("x", 100)); len(got) != 64 {
		t.Errorf("a long name is %d bytes, want 64", len(got))
	}
}

func TestServerTools(t *testing.T) {
	s := start(t)
	echo := tool(t, s, "everything__echo")
	var schema map[string]any
	if err := json.Unmarshal(echo.Parameters, &schema); err != nil || schema["type"] != "object" {
		t.Errorf("echo's input schema = %s", echo.Parameters)
	}
	r, err := echo.Run(context.Background(), json.RawMessage(`{"message":"hello from kindkit"}`))
	if err != nil || r.IsError || !strings.Contains(r.Text, "hello from kindkit") {
		t.Errorf("echo = %+v, %v", r, err)
	}
	// Arguments the tool's schema refuses: the server's error is the
	// model's to read.
	r, err = echo.Run(context.Background(), json.RawMessage(`{"message":7}`))
	if err == nil && !r.IsError {
		t.Errorf("echo with a number = %+v, want a tool error", r)
	}
	r, _ = echo.Run(context.Background(), json.RawMessage(`{"message":`))
	if !r.IsError {
		t.Errorf("echo with broken JSON = %+v, want a tool error", r)
	}
	sum := tool(t, s, "everything__get-sum")
	if r, err := sum.Run(context.Background(), json.RawMessage(`{"a":2,"b":40}`)); err != nil || !strings.Contains(r.Text, "42") {
		t.Errorf("get-sum = %+v, %v", r, err)
	}
}

// TestServerRestarts: a server that dies is started again; meanwhile a
// call fails fast with a clear error.
func TestServerRestarts(t *testing.T) {
	s := start(t)
	s.mu.Lock()
	s.cmd.Process.Kill()
	s.mu.Unlock()
	echo := tool(t, s, "everything__echo")
	deadline := time.Now().Add(30 * time.Second)
	sawDown := false
	for {
		r, err := echo.Run(context.Background(), json.RawMessage(`{"message":"again"}`))
		if err == nil && strings.Contains(r.Text, "again") {
			break
		}
		if err != nil && strings.Contains(err.Error(), "everything") {
			sawDown = true
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never came back: %+v, %v", r, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !sawDown {
		t.Error("no call failed while the server was down")
	}
}
