package servertest

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"go.opentelemetry.io/otel/trace"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/server"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
)

// Config is a test server's engine and wire settings in one literal: the
// fields of agent.Config, then those of server.Options.
type Config struct {
	Catalog          *kindkit.Catalog
	Store            store.Store
	Model            agent.Model
	Tools            []agent.HostTool
	ToolSets         []agent.ToolSet
	ConfirmTools     []string                         // tools whose name contains one of these wait for Approve or Reject
	Confirm          func(tool string) agent.Decision // a policy of its own instead
	Hooks            []kindkit.Hook
	Knowledge        agent.Knowledge
	ParkTimeout      time.Duration
	LeaseTimeout     time.Duration
	KeepParksOnDrain bool
	TracerProvider   trace.TracerProvider
	Metrics          agent.Metrics
	AgentName        string
	Clock            clockwork.Clock
	Logger           *slog.Logger

	AuthSecret        []byte
	AuthRules         server.TokenRules
	AllowedOrigins    []string
	FrameRate         float64
	FrameBurst        int
	ClientFrameRate   float64
	ClientFrameBurst  int
	ConversationRate  float64
	ConversationBurst int
	IdleTimeout       time.Duration
	MaxConnections    int
}

// Options is the server's part of cfg.
func (cfg Config) Options() server.Options {
	return server.Options{AuthSecret: cfg.AuthSecret, AuthRules: cfg.AuthRules, AllowedOrigins: cfg.AllowedOrigins,
		FrameRate: cfg.FrameRate, FrameBurst: cfg.FrameBurst, ClientFrameRate: cfg.ClientFrameRate, ClientFrameBurst: cfg.ClientFrameBurst,
		ConversationRate: cfg.ConversationRate, ConversationBurst: cfg.ConversationBurst, IdleTimeout: cfg.IdleTimeout,
		MaxConnections: cfg.MaxConnections, Logger: cfg.Logger}
}

// Engine is the engine's part of cfg.
func (cfg Config) Engine() agent.Config {
	confirm := cfg.Confirm
	if confirm == nil && len(cfg.ConfirmTools) > 0 {
		confirm = agent.ConfirmMatching(agent.Approve|agent.Reject, cfg.ConfirmTools...)
	}
	return agent.Config{Catalog: cfg.Catalog, Store: cfg.Store, Model: cfg.Model, Tools: cfg.Tools, ToolSets: cfg.ToolSets,
		Confirm: confirm, Hooks: cfg.Hooks, Knowledge: cfg.Knowledge, ParkTimeout: cfg.ParkTimeout,
		LeaseTimeout: cfg.LeaseTimeout, KeepParksOnDrain: cfg.KeepParksOnDrain, TracerProvider: cfg.TracerProvider,
		Metrics: cfg.Metrics, AgentName: cfg.AgentName, Clock: cfg.Clock, Logger: cfg.Logger}
}

// Server is a running test server.
type Server struct {
	*server.Server
	Engine *agent.Engine
	URL    string // http://127.0.0.1:port
}

// WS is the server's WebSocket URL.
func (s *Server) WS() string { return "ws" + strings.TrimPrefix(s.URL, "http") + "/ws" }

// Addr is the server's host:port.
func (s *Server) Addr() string { return strings.TrimPrefix(s.URL, "http://") }

// FanOutReady waits until the server's engine hears the other processes
// on its store (Engine.RelayReady).
func (s *Server) FanOutReady(ctx context.Context) error { return s.Engine.RelayReady(ctx) }

// New builds cfg's engine and its server, both stopped when the test ends
// (the server's connections drained first). A nil Catalog is kinds.All()
// and a nil Store a fresh memory store.
func New(t testing.TB, cfg Config) (*server.Server, *agent.Engine) {
	t.Helper()
	srv, eng := build(t, cfg)
	t.Cleanup(func() { stop(srv, eng, nil) })
	return srv, eng
}

// Start serves a server made from cfg (New) at /ws and /healthz, and root
// (when not nil) at /, until the test ends.
func Start(t testing.TB, cfg Config, root http.Handler) *Server {
	t.Helper()
	srv, eng := build(t, cfg)
	var h http.Handler = srv
	if root != nil {
		mux := http.NewServeMux()
		mux.Handle("/ws", srv)
		mux.Handle("/healthz", srv)
		mux.Handle("/readyz", srv)
		mux.Handle("/", root)
		h = mux
	}
	hs := httptest.NewServer(h)
	t.Cleanup(func() { stop(srv, eng, hs) })
	return &Server{Server: srv, Engine: eng, URL: hs.URL}
}

func build(t testing.TB, cfg Config) (*server.Server, *agent.Engine) {
	t.Helper()
	if cfg.Catalog == nil {
		catalog, err := kinds.All()
		if err != nil {
			t.Fatal(err)
		}
		cfg.Catalog = catalog
	}
	if cfg.Store == nil {
		cfg.Store = memstore.New()
	}
	eng, err := agent.NewEngine(cfg.Engine())
	if err != nil {
		t.Fatal(err)
	}
	return server.New(eng, cfg.Options()), eng
}

// stop drains the server, closes the HTTP server (nil: none) and stops
// the engine, as a main does.
func stop(srv *server.Server, eng *agent.Engine, hs *httptest.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	if hs != nil {
		hs.Close()
	}
	eng.Shutdown(ctx)
	eng.Close()
}
