package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/knowledge"
	"github.com/kindkit/kindkit/store"
)

// Config is what a Server is built from.
type Config struct {
	Catalog      *kindkit.Catalog
	Store        store.Store
	Model        agent.Model
	Tools        []agent.FixedTool // host tools with fixed results
	ConfirmTools []string          // a tool whose name contains one of these waits for confirm_tool_action
	// Knowledge, when set, is searched with each user message: the best
	// documents go to the model and, as citations, to the client.
	Knowledge *knowledge.Index
	// ParkTimeout is how long a park waits before it resolves no_response
	// (default 24h).
	ParkTimeout time.Duration
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
	Logger     *slog.Logger
}

// Server is the protocol's http.Handler: /ws and /healthz.
type Server struct {
	cfg      Config
	log      *slog.Logger
	draining atomic.Bool

	mu     sync.Mutex
	conns  map[*conn]struct{}
	parked map[string]*turn // park id → the parked turn, while its connection lives

	stop     chan struct{}
	loopDone chan struct{}
	turns    sync.WaitGroup // running turn goroutines
}

const (
	maxFrameBytes   = 1 << 20
	writeTimeout    = 10 * time.Second
	maxQueuedFrames = 4096
	maxQueuedBytes  = 8 << 20
	historyLimit    = 50
)

// New returns a server and starts its park-deadline loop; Close or Shutdown
// stops it.
func New(cfg Config) (*Server, error) {
	if cfg.Catalog == nil || cfg.Store == nil || cfg.Model == nil {
		return nil, errors.New("server: Catalog, Store and Model are required")
	}
	if cfg.ParkTimeout <= 0 {
		cfg.ParkTimeout = 24 * time.Hour
	}
	if cfg.AgentName == "" {
		cfg.AgentName = "kindkit"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{cfg: cfg, log: cfg.Logger, conns: map[*conn]struct{}{}, parked: map[string]*turn{},
		stop: make(chan struct{}), loopDone: make(chan struct{})}
	go s.expireLoop()
	return s, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz":
		if s.draining.Load() {
			http.Error(w, "server draining", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	case "/ws":
		s.serveWS(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		http.Error(w, "server draining", http.StatusServiceUnavailable)
		return
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		s.log.Debug("websocket accept", "err", err)
		return
	}
	defer ws.CloseNow()
	ws.SetReadLimit(maxFrameBytes)
	c := newConn(s, ws)
	if len(s.cfg.AuthSecret) > 0 {
		c.auth = true
		if p, err := VerifyToken(r.URL.Query().Get("token"), s.cfg.AuthSecret, time.Now()); err == nil {
			c.principal = p
		} else if r.URL.Query().Has("token") {
			s.log.Info("rejected token; connection is anonymous", "err", err)
		}
	}
	s.mu.Lock()
	if s.draining.Load() {
		s.mu.Unlock()
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
	s.Close()
	done := make(chan struct{})
	go func() { s.turns.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the deadline loop. Connections are closed by the HTTP
// server's own shutdown or by Shutdown.
func (s *Server) Close() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.loopDone
}

// expireLoop resolves parks whose deadline passed, whether or not anyone is
// connected.
func (s *Server) expireLoop() {
	defer close(s.loopDone)
	tick := min(time.Second, max(s.cfg.ParkTimeout/10, 10*time.Millisecond))
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.expireParks()
		}
	}
}

func (s *Server) expireParks() {
	ctx := context.Background()
	parks, err := s.cfg.Store.ExpiredParks(ctx, time.Now())
	if err != nil {
		s.log.Error("list expired parks", "err", err)
		return
	}
	for _, p := range parks {
		taken, ok, err := s.cfg.Store.TakePark(ctx, p.ID, store.ParkExpired)
		if err != nil || !ok {
			continue
		}
		s.log.Info("park expired", "interactionId", p.ID, "conversationId", p.ConversationID)
		s.resume(nil, nil, taken, s.expiredResult(taken))
	}
}

// expiredResult is the tool result of a park nobody answered in time.
func (s *Server) expiredResult(p *store.Park) toolResult {
	if p.Type == store.ParkConfirmation {
		return toolResult{text: deniedResult, isError: true}
	}
	return toolResult{text: kindkit.NoResponse().JSON()}
}

// unpark removes the parked turn of park id from the registry and returns
// it, nil when no connection holds it.
func (s *Server) unpark(id string) *turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.parked[id]
	delete(s.parked, id)
	return t
}

// claimParked unparks the turn of park id and frees its connection's slot.
func (s *Server) claimParked(id string) {
	if t := s.unpark(id); t != nil && t.conn != nil {
		t.conn.release(t)
	}
}
