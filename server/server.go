package server

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/clientlimit"
	"github.com/kindkit/kindkit/internal/cork"
	"github.com/kindkit/kindkit/internal/stack"
	"github.com/kindkit/kindkit/store"
)

// Options are the server's own settings, all about the wire: who may
// connect, and how much one connection or client may send. Everything
// about turns is the engine's (agent.Config), which the server is handed.
type Options struct {
	// AuthSecret turns on HS256 bearer tokens (?token= on /ws): a
	// conversation belongs to the principal that created it and is
	// invisible to others. Without it every conversation is visible to
	// whoever knows its id.
	AuthSecret []byte
	// AuthRules, with AuthSecret, are the audience and issuer a token must
	// name.
	AuthRules TokenRules
	// AllowedOrigins are the host patterns (path.Match syntax, as
	// coder/websocket's OriginPatterns) whose browser pages may open a
	// socket besides the server's own; "*" allows every origin. A page
	// from any other origin is refused with 403: otherwise any web page
	// could drive the agent, and spend its model, through its visitors'
	// browsers. Clients that send no Origin (not browsers) are not
	// affected. Empty: the server's own origin only.
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
	// over it gets 503. Open connections are counted by Connections.
	MaxConnections int
	Logger         *slog.Logger // default the engine's
}

// Server is the protocol's http.Handler: /ws, /healthz and /readyz. It
// serves the turns of the engine it is handed, which it does not own: the
// engine's owner stops it, after the server's Shutdown. Mounted under a
// prefix, it is handed the requests with the prefix stripped
// (http.StripPrefix).
type Server struct {
	opts     Options
	log      *slog.Logger
	clock    clockwork.Clock
	engine   *agent.Engine
	store    store.Store
	catalog  *kindkit.Catalog
	frames   *clientlimit.Limits // by client, across its connections
	creates  *clientlimit.Limits // conversations created, by client
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

// New returns a server of the engine's turns.
func New(engine *agent.Engine, opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = engine.Logger()
	}
	if opts.FrameRate == 0 {
		opts.FrameRate = 20
	}
	if opts.FrameBurst <= 0 {
		opts.FrameBurst = 40
	}
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = 10000
	}
	if opts.ClientFrameRate == 0 {
		opts.ClientFrameRate = 200
	}
	if opts.ClientFrameBurst <= 0 {
		opts.ClientFrameBurst = 400
	}
	if opts.ConversationRate == 0 {
		opts.ConversationRate = 10
	}
	if opts.ConversationBurst <= 0 {
		opts.ConversationBurst = 100
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = time.Minute
	}
	return &Server{opts: opts, log: opts.Logger, clock: engine.Clock(), engine: engine, store: engine.Store(), catalog: engine.Catalog(),
		conns:  map[*conn]struct{}{},
		frames: clientlimit.New(opts.ClientFrameRate, opts.ClientFrameBurst), creates: clientlimit.New(opts.ConversationRate, opts.ConversationBurst)}
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
	if err := s.store.Ping(ctx); err != nil {
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
	full := len(s.conns) >= s.opts.MaxConnections
	s.mu.Unlock()
	if full {
		http.Error(w, "too many connections", http.StatusServiceUnavailable)
		return
	}
	// The connection's goroutine is new, its stack small. Grown once here,
	// while it is shallow, it is not grown deeper down by the handshake,
	// the engine's calls and a kind's validator, each growth copying
	// every frame above it: that was 5-7% of kindserver's CPU at c=50
	// (runtime.copystack in its profile under kindload).
	stack.Grow()
	opts := &websocket.AcceptOptions{InsecureSkipVerify: slices.Contains(s.opts.AllowedOrigins, "*"), OriginPatterns: s.opts.AllowedOrigins}
	cw := &cork.Writer{ResponseWriter: w}
	ws, err := websocket.Accept(cw, r, opts)
	if err != nil {
		s.log.Debug("websocket accept", "err", err)
		return
	}
	defer ws.CloseNow()
	ws.SetReadLimit(maxFrameBytes)
	c := newConn(s, ws, cw.Conn)
	c.ip = "ip:" + clientlimit.RemoteIP(r) // once, not at every frame
	if len(s.opts.AuthSecret) > 0 {
		c.auth = true
		if p, err := VerifyToken(r.URL.Query().Get("token"), s.opts.AuthSecret, s.clock.Now(), s.opts.AuthRules); err == nil {
			c.principal = p
			c.identity.Store(&p)
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

// Shutdown drains: new upgrades get 503; each connection stops taking
// frames; the engine drains (Engine.Drain: its parks resolve no_response,
// unless it keeps parks on drain, and its turns finish), its clients
// seeing the turns end; then each connection flushes and closes with 1001
// "server draining". The engine's owner stops it next.
func (s *Server) Shutdown(ctx context.Context) error {
	s.draining.Store(true)
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	each := func(fn func(c *conn)) {
		var wg sync.WaitGroup
		for _, c := range conns {
			wg.Go(func() { fn(c) })
		}
		wg.Wait()
	}
	each(func(c *conn) { c.stopTaking(ctx) })
	if err := s.engine.Drain(ctx); err != nil {
		s.log.Warn("drain: turns still running", "err", err)
	}
	each(func(c *conn) { c.closeDrained(ctx) })
	return ctx.Err()
}
