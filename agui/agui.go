package agui

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/clientlimit"
	"github.com/kindkit/kindkit/server"
	"github.com/kindkit/kindkit/store"
)

// Options are the handler's own settings, all about the wire, as
// server.Options are the WebSocket server's: kindserver gives both the
// same auth and the same limits.
type Options struct {
	// AuthSecret turns on HS256 bearer tokens (server.VerifyToken), sent
	// as "Authorization: Bearer TOKEN" or, as on /ws, ?token=. A thread
	// then belongs to the principal that started it: another principal's
	// run on the same threadId gets a thread of its own. A request whose
	// token does not verify is anonymous, as on /ws.
	AuthSecret []byte
	AuthRules  server.TokenRules
	// AllowedOrigins are the host patterns (path.Match syntax) whose
	// browser pages may run the agent besides the server's own; "*"
	// allows every origin. A request whose Origin is none of them is
	// refused with 403, whatever its content type, so no other web page
	// can drive the agent (and spend its model) through its visitors'
	// browsers. Clients that send no Origin (not browsers) are not
	// affected. Empty: the server's own origin only.
	AllowedOrigins []string
	// MaxBodyBytes bounds a RunAgentInput (default 1 MiB, as a /ws frame);
	// a larger one gets 413.
	MaxBodyBytes int64
	// MaxRuns bounds the runs streaming at once (default 10000); one more
	// gets 503.
	MaxRuns int
	// ClientRunRate and ClientRunBurst bound the runs one client (its
	// principal, or its IP address when anonymous) starts, per second and
	// at once: defaults 200/s and 400, as a client's frames on /ws; a
	// negative rate means no bound. More get 429.
	ClientRunRate  float64
	ClientRunBurst int
	// ConversationRate and ConversationBurst bound the threads one client
	// starts (defaults 10/s and 100, negative: no bound); more get 429.
	ConversationRate  float64
	ConversationBurst int
	Logger            *slog.Logger // default the engine's
}

// Handler is AG-UI's http.Handler over an engine: POST a RunAgentInput
// to its root and read the run as server-sent events; GET /capabilities
// for the agent's AG-UI capabilities. It serves the engine it is handed,
// which it does not own. Mounted under a prefix, it is handed the
// requests with the prefix stripped (http.StripPrefix).
type Handler struct {
	opts     Options
	eng      *agent.Engine
	store    store.Store
	catalog  *kindkit.Catalog
	log      *slog.Logger
	clock    clockwork.Clock
	runs     *clientlimit.Limits // runs started, by client
	creates  *clientlimit.Limits // threads started, by client
	supports []string            // every capability of the catalog: a thread shows every kind's card

	mu       sync.Mutex
	open     map[*run]struct{}
	draining bool
	closing  chan struct{} // closed when Shutdown stops waiting: the streams left end
	done     sync.WaitGroup
}

const (
	defaultMaxBody = 1 << 20
	writeTimeout   = 10 * time.Second
)

// New returns an AG-UI handler of the engine's turns.
func New(engine *agent.Engine, opts Options) *Handler {
	if opts.Logger == nil {
		opts.Logger = engine.Logger()
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = defaultMaxBody
	}
	if opts.MaxRuns <= 0 {
		opts.MaxRuns = 10000
	}
	if opts.ClientRunRate == 0 {
		opts.ClientRunRate = 200
	}
	if opts.ClientRunBurst <= 0 {
		opts.ClientRunBurst = 400
	}
	if opts.ConversationRate == 0 {
		opts.ConversationRate = 10
	}
	if opts.ConversationBurst <= 0 {
		opts.ConversationBurst = 100
	}
	h := &Handler{opts: opts, eng: engine, store: engine.Store(), catalog: engine.Catalog(), log: opts.Logger, clock: engine.Clock(),
		runs: clientlimit.New(opts.ClientRunRate, opts.ClientRunBurst), creates: clientlimit.New(opts.ConversationRate, opts.ConversationBurst),
		open: map[*run]struct{}{}, closing: make(chan struct{})}
	for _, k := range h.catalog.Kinds() {
		if c := k.Descriptor().Capability; c != "" {
			h.supports = append(h.supports, c)
		}
	}
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	origin, ok := h.origin(r)
	if !ok {
		http.Error(w, "this origin may not run the agent (see -allowed-origins)", http.StatusForbidden)
		return
	}
	if origin != "" {
		w.Header().Set("Access-Control-Allow-Origin", origin)
		w.Header().Add("Vary", "Origin")
	}
	switch p := strings.TrimSuffix(r.URL.Path, "/"); {
	case r.Method == http.MethodOptions && (p == "" || p == "/capabilities"):
		w.Header().Set("Access-Control-Allow-Methods", "POST, GET")
		w.Header().Set("Access-Control-Allow-Headers", "Content-Type, Authorization, Accept")
		w.Header().Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
	case p == "" && r.Method == http.MethodPost:
		h.serveRun(w, r)
	case p == "/capabilities" && r.Method == http.MethodGet:
		h.capabilities(w)
	case p == "" || p == "/capabilities":
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	default:
		http.NotFound(w, r)
	}
}

// origin checks a browser's Origin as coder/websocket does for /ws: the
// server's own host, or one of AllowedOrigins. It returns the origin to
// answer a cross-origin request with ("" for none).
func (h *Handler) origin(r *http.Request) (string, bool) {
	o := r.Header.Get("Origin")
	if o == "" {
		return "", true
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return "", false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return "", true // same origin: nothing to declare
	}
	host := strings.ToLower(u.Host)
	for _, pattern := range h.opts.AllowedOrigins {
		if pattern == "*" {
			return o, true
		}
		if ok, err := path.Match(strings.ToLower(pattern), host); err == nil && ok {
			return o, true
		}
	}
	return "", false
}

// principal is who the request acts for: the subject of its verified
// token and its groups claim, "" when anonymous or when auth is off.
func (h *Handler) principal(r *http.Request) (sub string, groups []string) {
	if len(h.opts.AuthSecret) == 0 {
		return "", nil
	}
	token, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !found {
		token, found = r.URL.Query().Get("token"), r.URL.Query().Has("token")
	}
	if !found {
		return "", nil
	}
	p, err := server.VerifyToken(strings.TrimSpace(token), h.opts.AuthSecret, h.clock.Now(), h.opts.AuthRules)
	if err != nil {
		h.log.Info("agui: rejected token; the run is anonymous", "err", err)
		return "", nil
	}
	return p.Sub, p.Groups
}

// client names the request's client for its limits.
func client(principal string, r *http.Request) string {
	if principal != "" {
		return "sub:" + principal
	}
	return "ip:" + clientlimit.RemoteIP(r)
}

func (h *Handler) serveRun(w http.ResponseWriter, r *http.Request) {
	principal, groups := h.principal(r)
	who := client(principal, r)
	if !h.runs.Allow(who, h.clock.Now()) {
		http.Error(w, "too many runs: slow down", http.StatusTooManyRequests)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		http.Error(w, "the RunAgentInput is larger than the server takes", http.StatusRequestEntityTooLarge)
		return
	case err != nil:
		http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
		return
	}
	in, err := ParseInput(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	if principal != "" {
		ctx = agent.WithPrincipal(ctx, principal) // the record of an ask this run ends names it
		ctx = agent.WithGroups(ctx, groups)       // an ask addressed to a group of theirs is theirs to answer
	}
	th, err := h.thread(ctx, principal, in.ThreadID, who)
	switch {
	case errors.Is(err, errTooManyThreads):
		http.Error(w, err.Error(), http.StatusTooManyRequests)
		return
	case err != nil:
		h.log.Error("agui: open thread", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	rn := &run{h: h, ctx: ctx, w: w, rc: http.NewResponseController(w), in: in, thread: th, emitted: map[string]bool{}}
	if !h.admit(rn) {
		http.Error(w, "the server is draining or full", http.StatusServiceUnavailable)
		return
	}
	defer h.release(rn)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rn.serve()
}

// admit counts a run in, unless the handler is draining or full.
func (h *Handler) admit(rn *run) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.draining || len(h.open) >= h.opts.MaxRuns {
		return false
	}
	h.open[rn] = struct{}{}
	h.done.Add(1)
	return true
}

func (h *Handler) release(rn *run) {
	h.mu.Lock()
	delete(h.open, rn)
	h.mu.Unlock()
	h.done.Done()
}

// Runs is the number of runs streaming now.
func (h *Handler) Runs() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.open)
}

// Shutdown stops taking runs (503) and waits for the open ones to end;
// when ctx ends first, each ends with RUN_ERROR "server_draining": its
// turn goes on (or is taken over by the next process), and the client's
// next run gets what it said.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	h.draining = true
	h.mu.Unlock()
	ended := make(chan struct{})
	go func() {
		h.done.Wait()
		close(ended)
	}()
	select {
	case <-ended:
		return nil
	case <-ctx.Done():
	}
	h.mu.Lock()
	select {
	case <-h.closing:
	default:
		close(h.closing)
	}
	h.mu.Unlock()
	<-ended
	return ctx.Err()
}

func (h *Handler) capabilities(w http.ResponseWriter) {
	var c capabilities
	c.Identity.Name, c.Identity.Type = h.eng.AgentName(), "kindkit"
	c.Transport.Streaming = true
	c.Tools.Supported = true
	// Edits where a tool's policy allows them (agent.Edit): its
	// interrupt's responseSchema then has editedArgs.
	c.HumanInTheLoop.Supported, c.HumanInTheLoop.Approvals, c.HumanInTheLoop.Interrupts, c.HumanInTheLoop.ApproveWithEdits = true, true, true, true
	// No approve-with-edits: a confirmation is approved or denied as the
	// model made the call (docs/agui.md).
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(c)
}
