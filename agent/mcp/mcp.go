// Package mcp plugs Model Context Protocol servers into the agent as tool
// sources, on the official SDK (github.com/modelcontextprotocol/go-sdk).
// Each server's tools are offered to the model as host tools named
// SERVER__tool; a call goes to the server, and its text and structured
// content come back as the tool's result.
//
// A server's questions to the person (MCP elicitation, form and URL mode)
// become cards: from MCP 2026-07-28 on they come in the call's result and
// park as data (rounds.go); before, they come during a live call
// (elicit.go). A URL-mode question's card shows the link and waits for the
// person to say done or cancel, or, before 2026-07-28, for the server's
// notice that the link's flow was completed (complete.go).
//
// A server that dies is started again with backoff; calls meanwhile fail
// fast with a clear tool error. The tool list is read again when the server
// says it changed. Logs name the server and the tool, never arguments.
package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kindkit/kindkit/agent"
)

// Source names an MCP server: a command kindkit starts and talks to over
// stdio, or a streamable HTTP endpoint.
type Source struct {
	Name    string
	Command []string // stdio: the program and its arguments
	URL     string   // streamable HTTP: the endpoint
	// ElicitTimeout bounds how long a tool call may wait for the answers
	// to its elicitations (default 24h, the engine's park timeout). Make it
	// longer than the park timeout, so that a card's deadline answers the
	// server's question before the call is given up. It applies to servers
	// before MCP 2026-07-28, whose questions come during a live call; a
	// 2026-07-28 server's questions hold nothing open, and wait as long as
	// their cards.
	ElicitTimeout time.Duration
	// Ask is the kind whose cards ask the server's questions
	// (elicitation/create during a call, or a 2026-07-28 result's input
	// requests). Nil: the client declares no elicitation capability, so
	// the server does not ask.
	Ask *CardKind
}

// CardKind is the kind whose cards show an MCP server's questions, handed
// in by the main: package mcp names no kind. kindkit's own is the
// elicitation kind:
//
//	&mcp.CardKind{Name: elicitationgen.Name, Spec: elicitation.MCPSpec, URLSpec: elicitation.MCPURLSpec}
type CardKind struct {
	Name string // the kind's wire name
	// Spec is the card's spec for a form-mode question of the server named
	// server: its message, and the schema of the answer it asks for.
	Spec func(server, message string, requestedSchema map[string]any) json.RawMessage
	// URLSpec is the card's spec for a URL-mode question: the server's
	// message, the link the person is to open, and the server's id of the
	// elicitation ("" from MCP 2026-07-28 on, which has none). The answer
	// to such a card carries no values. Nil: the client declares form mode
	// only, so the server does not ask in URL mode.
	URLSpec func(server, message, url, elicitationID string) json.RawMessage
}

var validName = regexp.MustCompile(`^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$`)

// ParseSource reads NAME=COMMAND [ARGS…] or NAME=https://…/mcp, the form of
// kindserver's -mcp flag.
func ParseSource(s string) (Source, error) {
	name, target, ok := strings.Cut(s, "=")
	if !ok || !validName.MatchString(name) || len(name) > 32 {
		return Source{}, fmt.Errorf("mcp %q: want NAME=COMMAND [ARGS…] or NAME=https://…, with a NAME of letters, digits, - and single _", s)
	}
	if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
		return Source{Name: name, URL: target}, nil
	}
	fields := strings.Fields(target)
	if len(fields) == 0 {
		return Source{}, fmt.Errorf("mcp %s: no command", name)
	}
	return Source{Name: name, Command: fields}, nil
}

// Server is one connected MCP server and the host tools it offers. It is
// an agent.ToolSet.
type Server struct {
	src Source
	log *slog.Logger

	mu      sync.Mutex
	session *sdk.ClientSession // nil while the server is down
	tools   []agent.HostTool
	cmd     *exec.Cmd            // the stdio server's process
	calls   map[string]*liveCall // by the model's call id: calls waiting on, or for, an elicitation's answer
	links   map[string]*linkWait // by elicitation id: URL-mode questions of live calls, and early completion notices

	closing   chan struct{}
	closeOnce sync.Once
	done      chan struct{}
}

var _ agent.ToolSet = (*Server)(nil)

const (
	connectTimeout = 30 * time.Second
	minBackoff     = 500 * time.Millisecond
	maxBackoff     = 30 * time.Second
)

// Start connects to the server and lists its tools; it keeps the server
// connected until Close.
func Start(ctx context.Context, src Source, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.Default()
	}
	s := &Server{src: src, log: log.With("mcpServer", src.Name), calls: map[string]*liveCall{},
		links: map[string]*linkWait{}, closing: make(chan struct{}), done: make(chan struct{})}
	if err := s.connect(ctx); err != nil {
		return nil, err
	}
	go s.keep()
	return s, nil
}

// connect starts a session and reads the tool list.
func (s *Server) connect(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	opts := &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { go s.refresh() },
		// A 2026-07-28 server's input requests come back to the tool's
		// run, which parks them as data (rounds.go), instead of the
		// SDK's retry loop, which would wait for the answers in process.
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
	}
	if s.src.Ask != nil {
		opts.ElicitationHandler = s.elicit // declares the elicitation capability (form mode)
		if s.src.Ask.URLSpec != nil {
			// Both modes, and the roots capability the SDK declares by
			// default (kindkit has no roots: an empty list).
			opts.Capabilities = &sdk.ClientCapabilities{RootsV2: &sdk.RootCapabilities{ListChanged: true},
				Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}, URL: &sdk.URLElicitationCapabilities{}}}
			opts.ElicitationCompleteHandler = s.completed
		}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "kindkit", Version: "1"}, opts)
	var transport sdk.Transport
	var cmd *exec.Cmd
	if s.src.URL != "" {
		transport = &sdk.StreamableClientTransport{Endpoint: s.src.URL, HTTPClient: http.DefaultClient}
	} else {
		cmd = exec.Command(s.src.Command[0], s.src.Command[1:]...)
		transport = &sdk.CommandTransport{Command: cmd, TerminateDuration: time.Second}
	}
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return fmt.Errorf("mcp %s: connect: %w", s.src.Name, err)
	}
	tools, err := s.list(ctx, session)
	if err != nil {
		session.Close()
		return err
	}
	s.mu.Lock()
	s.session, s.tools, s.cmd = session, tools, cmd
	s.mu.Unlock()
	s.log.Info("mcp server connected", "tools", len(tools))
	return nil
}

// keep waits for the session to end and starts it again, with backoff,
// until Close.
func (s *Server) keep() {
	defer close(s.done)
	backoff := minBackoff
	for {
		s.mu.Lock()
		session := s.session
		s.mu.Unlock()
		if session != nil {
			err := session.Wait()
			select {
			case <-s.closing:
				return
			default:
			}
			s.log.Warn("mcp server went away; starting it again", "err", err)
			s.mu.Lock()
			s.session = nil
			s.mu.Unlock()
		}
		select {
		case <-s.closing:
			return
		case <-time.After(backoff):
		}
		if err := s.connect(context.Background()); err != nil {
			s.log.Warn("mcp server did not come back", "err", err, "retryIn", backoff)
			backoff = min(2*backoff, maxBackoff)
			continue
		}
		backoff = minBackoff
		select {
		case <-s.closing: // closed while connecting: Close saw no session
			s.mu.Lock()
			s.session.Close()
			s.mu.Unlock()
			return
		default:
		}
	}
}

// refresh reads the tool list again, after the server said it changed.
func (s *Server) refresh() {
	s.mu.Lock()
	session := s.session
	s.mu.Unlock()
	if session == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	tools, err := s.list(ctx, session)
	if err != nil {
		s.log.Warn("mcp server's tool list", "err", err)
		return
	}
	s.mu.Lock()
	if s.session == session {
		s.tools = tools
	}
	s.mu.Unlock()
}

// list reads the server's tools, every page, as host tools.
func (s *Server) list(ctx context.Context, session *sdk.ClientSession) ([]agent.HostTool, error) {
	var out []agent.HostTool
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("mcp %s: list tools: %w", s.src.Name, err)
		}
		params, err := json.Marshal(t.InputSchema)
		if err != nil || t.InputSchema == nil {
			params = []byte(`{"type":"object"}`)
		}
		out = append(out, agent.HostTool{
			Tool: agent.Tool{Name: ToolName(s.src.Name, t.Name), Description: t.Description, Parameters: params},
			Run:  s.caller(t.Name),
		})
	}
	return out, nil
}

// ToolName is the name the model sees for tool of server: SERVER__tool,
// within the model APIs' rules (letters, digits, _ and -, at most 64).
func ToolName(server, tool string) string {
	name := []byte(server + "__" + tool)
	for i, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			name[i] = '_'
		}
	}
	return string(name[:min(len(name), 64)])
}

// caller is the Run of the server's tool name.
func (s *Server) caller(name string) func(ctx context.Context, args json.RawMessage) (agent.Result, error) {
	return func(ctx context.Context, args json.RawMessage) (agent.Result, error) {
		if len(strings.TrimSpace(string(args))) == 0 {
			args = json.RawMessage("{}")
		}
		if !json.Valid(args) {
			return agent.Result{Text: "invalid arguments: not JSON", IsError: true}, nil
		}
		return s.call(ctx, name, args)
	}
}

// resultOf is a call's result as the model reads it: the text contents,
// then the structured content as JSON; other contents are named.
func resultOf(res *sdk.CallToolResult) agent.Result {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		default:
			parts = append(parts, fmt.Sprintf("[%T content]", c))
		}
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return agent.Result{Text: strings.Join(parts, "\n"), IsError: res.IsError}
}

// Tools is the server's tools as last listed. While the server restarts
// they stay on offer, and a call fails fast with a clear error.
func (s *Server) Tools() []agent.HostTool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools
}

// Close ends the session (and the stdio server's process); the server's
// open questions are cancelled first. Calling it again does nothing.
func (s *Server) Close() (err error) {
	s.closeOnce.Do(func() {
		close(s.closing)
		s.mu.Lock()
		session := s.session
		calls := slices.Collect(maps.Values(s.calls))
		s.mu.Unlock()
		for _, lc := range calls {
			lc.stop() // the session's Close waits for their requests
		}
		if session != nil {
			err = session.Close()
		}
		<-s.done
	})
	return err
}
