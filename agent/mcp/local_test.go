package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type sumArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

type sumOut struct {
	Sum int `json:"sum"`
}

// local is a go-sdk MCP server in this process, over streamable HTTP.
func local(t *testing.T) (*sdk.Server, *Server) {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "local", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "sum", Description: "Adds."}, func(ctx context.Context, _ *sdk.CallToolRequest, a sumArgs) (*sdk.CallToolResult, sumOut, error) {
		return nil, sumOut{a.A + a.B}, nil
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "fail"}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		return nil, nil, errors.New("the ledger is closed")
	})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	s, err := Start(context.Background(), Source{Name: "local", URL: hs.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return srv, s
}

// TestLocalServer: structured content comes back as JSON, a tool's error
// as a tool error, and a tool added later reaches the model once the
// server says its list changed.
func TestLocalServer(t *testing.T) {
	srv, s := local(t)
	r, err := tool(t, s, "local__sum").Run(context.Background(), json.RawMessage(`{"a":2,"b":3}`))
	if err != nil || r.IsError || !strings.Contains(r.Text, `{"sum":5}`) {
		t.Errorf("sum = %+v, %v", r, err)
	}
	r, err = tool(t, s, "local__fail").Run(context.Background(), nil)
	if err != nil || !r.IsError || !strings.Contains(r.Text, "the ledger is closed") {
		t.Errorf("fail = %+v, %v; want the server's error as a tool error", r, err)
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "later"}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "here"}}}, nil, nil
	})
	deadline := time.Now().Add(10 * time.Second)
	for !hasTool(s, "local__later") {
		if time.Now().After(deadline) {
			t.Fatal("the tool added later never reached the list")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func hasTool(s *Server, name string) bool {
	for _, ht := range s.Tools() {
		if ht.Name == name {
			return true
		}
	}
	return false
}
