package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/jonboulle/clockwork"
	"go.opentelemetry.io/otel/trace"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/cork"
	"github.com/kindkit/kindkit/store"
)

// Config is what a Server is built from.
type Config struct {
	Catalog      *kindkit.Catalog
	Store        store.Store
	Model        agent.Model
	Tools        []agent.HostTool // the host's own tools
	ToolSets     []agent.ToolSet  // more, whose list may change (MCP servers')
	ConfirmTools []string         // a tool whose name contains one of these waits for confirm_tool_action
	Hooks        []kindkit.Hook   // run with every accepted answer of their kind; see agent.Config
	// Knowledge, when set, is searched with each user message: the best
	// documents go to the model and, as citations, to the client.
	Knowledge agent.Knowledge
	// ParkTimeout is how long a park waits before it resolves no_response
	// (default 24h).
	ParkTimeout time.Duration
	// LeaseTimeout is how long a resumed turn stays this process's without
	// a renewal (default 15s); see agent.Config.
	LeaseTimeout time.Duration
	Clock        clockwork.Clock // default the real clock
	// KeepParksOnDrain leaves parks pending at shutdown, for stores that
	// outlive the process; otherwise they resolve no_response so every turn
	// finishes before the process exits.
	KeepParksOnDrain bool
	AgentName        string // default "kindkit"
	// AuthSecret turns on HS256 bearer tokens (?token= on /ws): a
	// conversation belongs to the principal that created it and is
	// invisible to others. Without it every conversation is visible to
	// whoever knows its id.
	AuthSecret []byte
	// AuthRules, with AuthSecret, are the audience and issuer a token must
	// name.
	AuthRules TokenRules
	// AllowedOrigins, when set, are the host patterns (path.Match syntax,
	// as coder/websocket's OriginPatterns) whose pages may open a socket;
	// a browser page from any other origin is refused with 403. The
	// server's own origin and clients that send no Origin (not browsers)
	// are not affected. Empty: every origin, as before.
	AllowedOrigins []string
	// FrameRate and FrameBurst bound the frames one connection may send
	// (per second, and at once): a frame over the bound is answered with
	// RATE_LIMITED and dropped. Defaults 20/s and 40; a negative FrameRate
	// means no bound.
	FrameRate  float64
	FrameBurst int
	// ClientFrameRate and ClientFrameBurst bound the frames one client
	// sends across all its connections (its principal, or its IP address
	// when anonymous); defaults 200/s and 400, negative: no bound.
	ClientFrameRate  float64
	ClientFrameBurst int
	// ConversationRate and ConversationBurst bound the conversations one
	// client creates (RATE_LIMITED beyond); defaults 10/s and 100,
	// negative: no bound.
	ConversationRate  float64
	ConversationBurst int
	// IdleTimeout closes a socket that does not answer a ping: one goes
	// out every half of it, and gets half of it to come back. Default 60s,
	// negative: never.
	IdleTimeout time.Duration
	// MaxConnections bounds the open sockets (default 10000); an upgrade
	// over it gets 503.
	MaxConnections int
	// TracerProvider and Metrics go to the turn engine: see agent.Config.
	// Open connections are counted by Connections.
	TracerProvider trace.TracerProvider
	Metrics        agent.Metrics
	Logger         *slog.Logger
}

// Server is the protocol's http.Handler: /ws, /healthz and /readyz.
type Server struct {
	cfg      Config
	log      *slog.Logger
	clock    clockwork.Clock
	engine   *agent.Engine
	frames   *clientLimits // by client, across its connections
	creates  *clientLimits // conversations created, by client
	draining atomic.Bool

	mu    sync.Mutex
	conns map[*conn]struct{}
}

const (
	maxFrameBytes   = 1 << 20
	writeTimeout    = 10 * time.Second
	maxQueuedFrames = 4096
	maxQueuedBytes  = 8 << 20
	healthTimeout   = 2 * time.Second
)

// New returns a server and starts its engine; Close or Shutdown stops it.
func New(cfg Config) (*Server, error) {
	if cfg.AgentName == "" {
		cfg.AgentName = "kindkit"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.FrameRate == 0 {
		cfg.FrameRate = 20
	}
	if cfg.FrameBurst <= 0 {
		cfg.FrameBurst = 40
	}
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = 10000
	}
	if cfg.ClientFrameRate == 0 {
		cfg.ClientFrameRate = 200
	}
	if cfg.ClientFrameBurst <= 0 {
		cfg.ClientFrameBurst = 400
	}
	if cfg.ConversationRate == 0 {
		cfg.ConversationRate = 10
	}
	if cfg.ConversationBurst <= 0 {
		cfg.ConversationBurst = 100
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = time.Minute
	}
	clock := cfg.Clock
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	s := &Server{cfg: cfg, log: cfg.Logger, clock: clock, conns: map[*conn]struct{}{},
		frames: newClientLimits(cfg.ClientFrameRate, cfg.ClientFrameBurst), creates: newClientLimits(cfg.ConversationRate, cfg.ConversationBurst)}
	eng, err := agent.NewEngine(agent.Config{Catalog: cfg.Catalog, Store: cfg.Store, Model: cfg.Model, Tools: cfg.Tools, ToolSets: cfg.ToolSets,
		ConfirmTools: cfg.ConfirmTools, Hooks: cfg.Hooks, Knowledge: cfg.Knowledge, ParkTimeout: cfg.ParkTimeout, LeaseTimeout: cfg.LeaseTimeout,
		KeepParksOnDrain: cfg.KeepParksOnDrain, Clock: cfg.Clock, Logger: cfg.Logger,
		TracerProvider: cfg.TracerProvider, Metrics: cfg.Metrics, AgentName: cfg.AgentName})
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.engine = eng
	return s, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz":
		s.health(w, r, false)
	case "/readyz":
		s.health(w, r, true)
	case "/ws":
		s.serveWS(w, r)
	default:
		http.NotFound(w, r)
	}
}

// health answers /healthz (the store answers) and /readyz (the same, and
// the server is not draining).
func (s *Server) health(w http.ResponseWriter, r *http.Request, ready bool) {
	if ready && s.draining.Load() {
		http.Error(w, "server draining", http.StatusServiceUnavailable)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
	defer cancel()
	if err := s.cfg.Store.Ping(ctx); err != nil {
		s.log.Warn("health check: the store does not answer", "err", err)
		http.Error(w, "store unavailable", http.StatusServiceUnavailable)
		return
	}
	w.Write([]byte("ok\n"))
}

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		http.Error(w, "server draining", http.StatusServiceUnavailable)
		return
	}
	s.mu.Lock()
	full := len(s.conns) >= s.cfg.MaxConnections
	s.mu.Unlock()
	if full {
		http.Error(w, "too many connections", http.StatusServiceUnavailable)
		return
	}
	opts := &websocket.AcceptOptions{InsecureSkipVerify: len(s.cfg.AllowedOrigins) == 0, OriginPatterns: s.cfg.AllowedOrigins}
	cw := &cork.Writer{ResponseWriter: w}
	ws, err := websocket.Accept(cw, r, opts)
	if err != nil {
		s.log.Debug("websocket accept", "err", err)
		return
	}
	defer ws.CloseNow()
	ws.SetReadLimit(maxFrameBytes)
	c := newConn(s, ws, cw.Conn)
	c.ip = remoteIP(r)
	if len(s.cfg.AuthSecret) > 0 {
		c.auth = true
		if p, err := VerifyToken(r.URL.Query().Get("token"), s.cfg.AuthSecret, s.clock.Now(), s.cfg.AuthRules); err == nil {
			c.principal = p
		} else if r.URL.Query().Has("token") {
			s.log.Info("rejected token; connection is anonymous", "err", err)
		}
	}
	s.mu.Lock()
	if s.draining.Load() {
		s.mu.Unlock()
		c.closeQueue() // its writer is running already
		<-c.writerDone
		ws.Close(websocket.StatusGoingAway, "server draining")
		return
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	c.serve(r.Context())
}

// Connections is the number of open sockets.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// FanOutReady waits until the server hears the turns of the other
// processes that share its store (Engine.RelayReady), or ctx ends; at once
// when the store is not shared.
func (s *Server) FanOutReady(ctx context.Context) error { return s.engine.RelayReady(ctx) }

// Shutdown drains: new upgrades get 503; each connection stops taking
// frames, its parks resolve no_response (unless KeepParksOnDrain), its
// turns finish and flush, and it closes with 1001 "server draining".
func (s *Server) Shutdown(ctx context.Context) error {
	s.draining.Store(true)
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.drain(ctx)
		}()
	}
	wg.Wait()
	return s.engine.Shutdown(ctx)
}

// Close stops the engine's loop and the fan-out to other processes.
// Connections are closed by the HTTP server's own shutdown or by Shutdown.
func (s *Server) Close() { s.engine.Close() }
