package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/store"
)

// Config is what an Engine is built from.
type Config struct {
	Catalog  *kindkit.Catalog
	Store    store.Store
	Model    Model
	Tools    []HostTool // the host's own tools
	ToolSets []ToolSet  // more host tools, listed again for every model call (MCP servers')
	// Confirm is the confirmation policy: for a tool's name, the
	// decisions a person may make on its calls, which wait for them
	// before they run (a write confirmation); 0 runs the call without
	// asking. Approve and Reject are always allowed once a call waits
	// (Engine.Allowed). ConfirmMatching makes one from name substrings.
	Confirm func(tool string) Decision
	// ConfirmTo, when set, addresses a tool's confirmations (MayAnswer):
	// for its name, the principal or "group:NAME" that alone may decide
	// on its calls; "" lets any participant.
	ConfirmTo func(tool string) string
	// Hooks run with every accepted answer of their kind (<kind>gen.OnAnswer),
	// on the card's path and on the conversation's; an error is logged and
	// never fails the turn.
	Hooks []kindkit.Hook
	// Knowledge, when set, is searched with each user message: the best
	// documents go to the model and, as citations, with the reply.
	Knowledge Knowledge
	// ParkTimeout is how long a park waits for its answer by default
	// (default 24h), and OnExpiry what its deadline resolves it to by
	// default: kindkit.ExpireNoResponse (the default) or
	// kindkit.ExpireEndTurn. An Ask may set its own (kindkit.WithDeadline),
	// default values included.
	ParkTimeout time.Duration
	OnExpiry    kindkit.Expiry
	// LeaseTimeout is how long a resumed turn stays this process's without
	// a renewal (default 15s); the engine renews it every third of that. A
	// turn whose process died is taken over once its lease has run out.
	LeaseTimeout time.Duration
	// Outbox names the consumers of the store's outbox of ask events (a
	// webhook sender's endpoints: webhook.Sender.Consumers): from the
	// engine's first write on, every park saved and every park that ends
	// writes an event for each of them in the same write, so none is
	// missed, also across a crash. The store must keep an outbox
	// (store.OutboxOf). Empty, the default: no event is written.
	Outbox []string
	// KeepParksOnDrain leaves parks pending at shutdown, for stores that
	// outlive the process; otherwise they resolve no_response so every turn
	// finishes before the process exits.
	KeepParksOnDrain bool
	// TracerProvider makes the engine's spans (GenAI conventions: a span
	// per turn run, model call, tool call and park wait; never message
	// text or tool arguments). Default otel's global provider, a no-op
	// unless the program set one.
	TracerProvider trace.TracerProvider
	// Metrics is told turns, model calls, tool calls and parks; default
	// none.
	Metrics   Metrics
	AgentName string          // gen_ai.agent.name; default "kindkit"
	Clock     clockwork.Clock // default the real clock
	Logger    *slog.Logger
}

// Engine runs turns and owns every turn's and every park's life: it starts
// a turn (Send), parks it on a card, takes the park with its answer
// (Submit, Confirm: exactly once, through the store) and resumes the turn,
// shows the card again to a client that comes back (Rejoin), cancels a
// turn (Cancel, Abort, or a message that withdraws its card), opens
// conversations and sessions (NewConversation, OpenSession), expires a
// park at its deadline, drains at shutdown, and holds the leases of
// running turns, taking over those whose process died. What its turns
// say goes to their conversation's subscribers (Subscribe), here and in
// the other processes.
//
// Lock order, the one table of the engine's locks (a lock is taken only
// after those before it on its line):
//
//	turn.emitMu  → stream.mu → subscription.mu
//	turn.leaseMu → Engine.mu
//	Engine.mu, Engine.toolsMu, Engine.runMu, asker.mu: leaves
//
// Holding one of them the engine calls no code but its own, the store's
// (under a turn's leaseMu, which orders the turn's writes) and Metrics': a
// subscriber is told its events, an ack runs and a hook runs with no lock
// of the engine held. No lock rule reaches into a transport.
type Engine struct {
	cfg   Config
	log   *slog.Logger
	clock clockwork.Clock
	owner string // this engine's name on the leases it holds

	tracer trace.Tracer
	// tracing: the provider is not the no-op one, so the turn's spans are
	// made; with the no-op provider (kindserver's without an OTLP
	// endpoint) a turn starts none, and saves their attributes and
	// contexts, some twenty allocations a cycle.
	tracing      bool
	metrics      Metrics
	modelName    string // "" when the model does not say
	runSpanName  string
	chatSpanName string

	mu       sync.Mutex
	parked   map[string]*turn // conversation id → its parked turn, held while someone here subscribes to it
	leased   map[string]*turn // park id → the running turn that holds its lease
	draining bool             // Drain began: a park resolves no_response at once, unless KeepParksOnDrain

	stream    *stream // every turn's events, to the conversations' subscribers
	stop      chan struct{}
	stopOnce  sync.Once // Close, Drain and Shutdown may stop the loop at once
	loopDone  chan struct{}
	stopRelay context.CancelFunc
	relayDone chan struct{}

	// What the model is offered, built once: the catalog does not change.
	kinds       []kindkit.Descriptor
	raiseTools  []Tool
	toolsMu     sync.Mutex // leaf lock
	submitTools map[string]Tool

	// A count, not a WaitGroup: a turn may start (a sweep's) while Wait
	// waits, which a WaitGroup forbids once its count is zero.
	runMu   sync.Mutex // leaf lock
	idle    sync.Cond  // on runMu: runs fell to zero
	closing bool       // Shutdown began: no run starts
	runs    int        // running turn runs
	workers *workers   // the goroutines they run on
}

// sweepBatch bounds the expired parks one sweep resolves and the owed
// turns it claims, so that a tick's cost follows the batch, not the number
// of parks the store holds; a backlog is worked off a batch a tick.
const sweepBatch = 100

// NewEngine returns an engine and starts its loop, which resolves parks
// whose deadline passed, renews the leases it holds and takes over owed
// turns whose lease ran out (at once, so a restarted process finishes what
// its previous run left). Close or Shutdown stops it.
func NewEngine(cfg Config) (*Engine, error) {
	if cfg.Catalog == nil || cfg.Store == nil || cfg.Model == nil {
		return nil, errors.New("agent: Catalog, Store and Model are required")
	}
	if cfg.ParkTimeout <= 0 {
		cfg.ParkTimeout = 24 * time.Hour
	}
	switch cfg.OnExpiry {
	case "", kindkit.ExpireNoResponse, kindkit.ExpireEndTurn:
	default:
		return nil, fmt.Errorf("agent: OnExpiry %q: the default is %q or %q (default values are an Ask's, per kind)", cfg.OnExpiry, kindkit.ExpireNoResponse, kindkit.ExpireEndTurn)
	}
	if cfg.LeaseTimeout <= 0 {
		cfg.LeaseTimeout = 15 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clockwork.NewRealClock()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.TracerProvider == nil {
		cfg.TracerProvider = otel.GetTracerProvider()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = nopMetrics{}
	}
	if cfg.AgentName == "" {
		cfg.AgentName = "kindkit"
	}
	if len(cfg.Outbox) > 0 {
		// Before the loop starts: a park it expires has its event too.
		out := store.OutboxOf(cfg.Store)
		if out == nil {
			return nil, fmt.Errorf("agent: Outbox: the store (%T) keeps no outbox", cfg.Store)
		}
		out.OpenOutbox(cfg.Outbox...)
	}
	// The owner names this process on its leases; it is no key: v4.
	e := &Engine{cfg: cfg, log: cfg.Logger, clock: cfg.Clock, owner: uuid.NewString(),
		tracer: cfg.TracerProvider.Tracer(tracerName), tracing: tracingOn(cfg.TracerProvider), metrics: cfg.Metrics,
		runSpanName: "invoke_agent " + cfg.AgentName, chatSpanName: "chat",
		parked: map[string]*turn{}, leased: map[string]*turn{}, submitTools: map[string]Tool{},
		stop: make(chan struct{}), loopDone: make(chan struct{})}
	e.idle.L = &e.runMu
	e.workers = newWorkers(e.stop)
	var bus store.Notifier
	if shared, ok := cfg.Store.(store.Shared); ok {
		bus = shared.Notifier()
	}
	e.stream = newStream(e, bus)
	for _, k := range cfg.Catalog.Kinds() {
		d := k.Descriptor()
		e.kinds = append(e.kinds, d)
		if d.ToolName != "" {
			e.raiseTools = append(e.raiseTools, Tool{Name: d.ToolName, Description: d.ToolDescription, Parameters: json.RawMessage(d.ToolSchema)})
		}
	}
	if m, ok := cfg.Model.(NamedModel); ok && m.ModelName() != "" {
		e.modelName = m.ModelName()
		e.chatSpanName = "chat " + e.modelName
	}
	relayCtx, stopRelay := context.WithCancel(context.Background())
	e.stopRelay, e.relayDone = stopRelay, make(chan struct{})
	go func() {
		defer close(e.relayDone)
		e.stream.run(relayCtx)
	}()
	go e.loop()
	return e, nil
}

// Catalog is the kinds the engine hosts.
func (e *Engine) Catalog() *kindkit.Catalog { return e.cfg.Catalog }

// Store is the store the engine keeps conversations and turns in.
func (e *Engine) Store() store.Store { return e.cfg.Store }

// AgentName is the agent's name (Config.AgentName).
func (e *Engine) AgentName() string { return e.cfg.AgentName }

// Clock is the engine's clock, for a transport's own deadlines.
func (e *Engine) Clock() clockwork.Clock { return e.clock }

// Logger is the engine's logger.
func (e *Engine) Logger() *slog.Logger { return e.log }

// Close stops the engine's loop and its relay to other processes. Running
// turns go on; Shutdown waits for them.
func (e *Engine) Close() {
	e.stopLoop()
	e.closeRelay()
}

func (e *Engine) stopLoop() {
	e.stopOnce.Do(func() { close(e.stop) })
	<-e.loopDone
}

func (e *Engine) closeRelay() {
	e.stopRelay()
	<-e.relayDone
}

// Drain readies the engine for the process's exit while its clients are
// still there to see the turns end: the loop stops (no park expires, no
// turn is taken over), the parks held here (those someone here subscribes
// to) resolve no_response and their turns run on, and so does a turn that
// parks from now on, unless Config.KeepParksOnDrain leaves them pending
// for the next process. It returns when no turn runs, or when ctx ends.
// A transport stops taking requests before it drains.
func (e *Engine) Drain(ctx context.Context) error {
	e.stopLoop()
	e.mu.Lock()
	e.draining = true
	var held []*turn
	if !e.cfg.KeepParksOnDrain {
		for _, t := range e.parked {
			held = append(held, t)
		}
	}
	e.mu.Unlock()
	for _, t := range held {
		if w := t.parked.Load(); w != nil {
			for _, c := range append([]*waiting{w}, w.rest...) {
				if _, err := e.resolveAck(ctx, t.session, c.park, store.ParkExpired, e.expiredAnswer(c.park), ViaDrain, nil); err != nil {
					e.log.Error("drain: resolve park", "interactionId", c.park.ID, "err", err)
				}
			}
		}
	}
	return e.waitRuns(ctx)
}

// Shutdown stops the loop and waits for the running turns to finish, or
// for ctx, then stops the relay; no turn starts from then on. A turn that
// has not finished when the process exits stays owed in the store, and
// the next process finishes it.
func (e *Engine) Shutdown(ctx context.Context) error {
	e.stopLoop()
	defer e.closeRelay()
	e.runMu.Lock()
	e.closing = true
	e.runMu.Unlock()
	return e.waitRuns(ctx)
}

func (e *Engine) waitRuns(ctx context.Context) error {
	done := make(chan struct{})
	go func() { e.Wait(); e.workers.wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// submitTool is submit_interaction for the kinds named, built once per set
// of kinds (a few: they follow the capabilities clients declare) and kept,
// up to maxSubmitTools sets.
// A turn asks for it twice a cycle: a kept one costs no allocation, so its
// key is built on the stack and kinds is only read (slices.Clone for the
// encoder, which would have it escape).
func (e *Engine) submitTool(kinds []string) Tool {
	var buf [256]byte
	key := buf[:0]
	for i, k := range kinds {
		if i > 0 {
			key = append(key, 0)
		}
		key = append(key, k...)
	}
	e.toolsMu.Lock()
	defer e.toolsMu.Unlock()
	if tool, ok := e.submitTools[string(key)]; ok {
		return tool
	}
	enum, _ := json.Marshal(slices.Clone(kinds))
	tool := Tool{Name: SubmitToolName, Description: submitToolDescribe,
		Parameters: json.RawMessage(fmt.Sprintf(submitToolSchema, enum))}
	if len(e.submitTools) < maxSubmitTools {
		e.submitTools[string(key)] = tool
	}
	return tool
}

const maxSubmitTools = 64

// hostTools are the host's tools as they are now.
func (e *Engine) hostTools() []HostTool {
	if len(e.cfg.ToolSets) == 0 {
		return e.cfg.Tools
	}
	tools := slices.Clone(e.cfg.Tools)
	for _, set := range e.cfg.ToolSets {
		tools = append(tools, set.Tools()...)
	}
	return tools
}

// hostTool is the host tool named name.
func (e *Engine) hostTool(name string) (HostTool, bool) {
	for _, ht := range e.hostTools() {
		if ht.Name == name && name != "" {
			return ht, true
		}
	}
	return HostTool{}, false
}

// Wait blocks until no turn runs. A turn may start meanwhile (the
// engine's sweep resumes and takes over turns): Wait then waits for it
// too.
func (e *Engine) Wait() {
	e.runMu.Lock()
	defer e.runMu.Unlock()
	for e.runs > 0 {
		e.idle.Wait()
	}
}

// runStarts counts a run in, unless Shutdown has begun.
func (e *Engine) runStarts() bool {
	e.runMu.Lock()
	defer e.runMu.Unlock()
	if e.closing {
		return false
	}
	e.runs++
	return true
}

// runEnded counts a run out.
func (e *Engine) runEnded() {
	e.runMu.Lock()
	defer e.runMu.Unlock()
	if e.runs--; e.runs == 0 {
		e.idle.Broadcast()
	}
}

// tick is the loop's period: a tenth of the park timeout and a third of
// the lease, at most a second.
func (e *Engine) tick() time.Duration {
	return min(time.Second, max(e.cfg.ParkTimeout/10, 10*time.Millisecond), e.cfg.LeaseTimeout/3)
}

func (e *Engine) loop() {
	defer close(e.loopDone)
	t := e.clock.NewTicker(e.tick())
	defer t.Stop()
	renewed := e.clock.Now()
	e.sweep()
	for {
		select {
		case <-e.stop:
			return
		case <-t.Chan():
			if now := e.clock.Now(); now.Sub(renewed) >= e.cfg.LeaseTimeout/3 {
				e.renewLeases()
				renewed = now
			}
			e.sweep()
		}
	}
}

// sweep resolves expired parks and takes over owed turns whose lease ran
// out.
func (e *Engine) sweep() {
	ctx := context.Background()
	now := e.clock.Now()
	parks, err := e.cfg.Store.ExpiredParks(ctx, now, sweepBatch)
	if err != nil {
		e.log.Error("list expired parks", "err", err)
	}
	for _, p := range parks {
		e.log.Info("park expired", "interactionId", p.ID)
		if err := e.expire(ctx, p); err != nil {
			e.log.Error("expire park", "interactionId", p.ID, "err", err)
		}
	}
	owed, err := e.cfg.Store.OwedTurns(ctx, now, sweepBatch)
	if err != nil {
		e.log.Error("list owed turns", "err", err)
		return
	}
	for _, p := range owed {
		if e.running(p.ID) {
			// It runs here, and its renewal is late (a starved process):
			// taken over by this very engine, it would run twice, and the
			// run its client may abort would be the one stopped.
			continue
		}
		l := e.lease(p.ID)
		taken, ok, err := e.cfg.Store.ClaimTurn(ctx, l, now)
		if err != nil {
			e.log.Error("take over turn", "interactionId", p.ID, "err", err)
			continue
		}
		if !ok {
			continue // another process was quicker
		}
		sess, err := e.cfg.Store.Session(ctx, taken.SessionID)
		if err != nil {
			e.log.Error("take over turn: load session", "interactionId", p.ID, "err", err)
			continue
		}
		state, err := stateOf(taken)
		if err != nil {
			// It can never be resumed: it stops being owed, loudly.
			e.log.Error("take over turn: its state cannot be read; the turn ends unanswered", "interactionId", p.ID, "err", err)
			if err := e.cfg.Store.SaveStep(ctx, l, store.Step{Turn: taken.Turn, Done: true}); err != nil {
				e.log.Error("end unreadable turn", "interactionId", p.ID, "err", err)
			}
			continue
		}
		e.log.Info("taking over a turn owed a reply", "interactionId", p.ID)
		t := e.newTurn(sess, state)
		t.after = p.ID
		e.hold(t, l)
		t.goRun(t.run)
	}
}

// renewLeases extends the lease of every turn this engine runs; a turn
// whose lease another process took is stopped.
func (e *Engine) renewLeases() {
	e.mu.Lock()
	turns := make([]*turn, 0, len(e.leased))
	for _, t := range e.leased {
		turns = append(turns, t)
	}
	e.mu.Unlock()
	for _, t := range turns {
		_, err := t.underLease(false, func(l store.Lease) error { return e.cfg.Store.RenewLease(context.Background(), l) })
		if errors.Is(err, store.ErrLeaseLost) {
			e.log.Warn("lease lost; another process runs the turn", "requestId", t.requestID)
			t.stop()
		} else if err != nil {
			e.log.Error("renew lease", "requestId", t.requestID, "err", err)
		}
	}
}

// lease is a fresh lease of this engine on park id.
func (e *Engine) lease(parkID string) store.Lease {
	return store.Lease{ParkID: parkID, Owner: e.owner, Until: e.clock.Now().Add(e.cfg.LeaseTimeout)}
}

// hold records that t runs under lease l.
func (e *Engine) hold(t *turn, l store.Lease) {
	t.setLease(&l)
	e.mu.Lock()
	e.leased[l.ParkID] = t
	e.mu.Unlock()
}

// running tells whether a turn of this engine holds the lease of park id.
func (e *Engine) running(parkID string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.leased[parkID]
	return ok
}

// letGo forgets the lease t held on park id.
func (e *Engine) letGo(t *turn, parkID string) {
	e.mu.Lock()
	if e.leased[parkID] == t {
		delete(e.leased, parkID)
	}
	e.mu.Unlock()
}

// unpark lets go of conversation conv's parked turn when it is parked on
// park id, and returns it; nil when it is not held here.
func (e *Engine) unpark(conv, id string) *turn {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.parked[conv]
	if t == nil || !t.waitsOn(id) {
		return nil
	}
	delete(e.parked, conv)
	return t
}

// letGoParked lets go of conversation conv's parked turn: nobody here
// subscribes to it any more, and a resume reads what it held from the
// store.
func (e *Engine) letGoParked(conv string) {
	e.mu.Lock()
	delete(e.parked, conv)
	e.mu.Unlock()
}

// find is the turn requestID of conversation conv that runs here, or is
// parked and held here; nil when there is none.
func (e *Engine) find(conv, requestID string) *turn {
	e.mu.Lock()
	defer e.mu.Unlock()
	if t := e.parked[conv]; t != nil && t.requestID == requestID {
		return t
	}
	for _, t := range e.leased {
		if t.session.ConversationID == conv && t.requestID == requestID {
			return t
		}
	}
	return nil
}

// SetSupports declares conversation conv's capabilities anew (nil clears
// them), for its next turns and for a turn of it parked now, here or, told
// through the relay, in another process. Change them through it rather than
// the store: a parked turn goes on with the conversation it kept.
func (e *Engine) SetSupports(ctx context.Context, conv string, supports []string) error {
	if err := e.cfg.Store.SetSupports(ctx, conv, supports); err != nil {
		return err
	}
	e.capabilitiesChanged(conv)
	e.stream.declared(conv)
	return nil
}

// capabilitiesChanged is told that conversation conv's capabilities were
// declared anew, by SetSupports here or in another process: a turn of it
// parked here reads the conversation again when it resumes, rather than
// go on with the one it kept.
func (e *Engine) capabilitiesChanged(conv string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if t := e.parked[conv]; t != nil {
		t.conv = nil
	}
}

// observe tells conv's subscribers an event that no turn here tells.
func (e *Engine) observe(conv string, ev Event) { e.stream.post(conv, ev).run() }

func (e *Engine) parkTaken(conv, id string) { e.stream.taken(conv, id) }

// expiredAnswer is the tool result of a park nobody answered in time.
func (e *Engine) expiredAnswer(p *store.Park) Result {
	if p.Type == store.ParkConfirmation {
		return Result{Text: deniedResult, IsError: true}
	}
	return Result{Text: kindkit.NoResponse().JSON()}
}

// Result is a tool call's result.
type Result struct {
	Text    string
	IsError bool
}

// Answer is a person's answer to a card: its values, or a decline.
type Answer struct {
	Values   json.RawMessage
	Declined bool
}

// ErrKindNotHosted is Submit's error for a card whose kind is not in the
// engine's catalog (it was raised by a process that hosts other kinds).
var ErrKindNotHosted = errors.New("agent: the card's kind is not hosted here")

// InvalidAnswerError is Submit's error for values the card's kind
// refuses, one FieldError a problem: the card stays pending, and the
// person may answer again.
type InvalidAnswerError struct {
	Errors []kindkit.FieldError
}

func (e *InvalidAnswerError) Error() string {
	return fmt.Sprintf("agent: the answer has %d problems", len(e.Errors))
}

// Taken is what an answer took, as its ack is told: the turn it resumes
// (it names the turn on the wire) and the values taken, canonical (nil for
// a decline or a confirmation).
type Taken struct {
	RequestID string
	Values    json.RawMessage
	// Resumes is false for an answer to one of several cards open at once
	// (ParallelAsks) that others still wait on: it is stored, and the
	// turn resumes from the answer that settles the last of them.
	Resumes bool
}

// Submit answers park parkID, the pending card of sess's conversation,
// with a, on the one path every answer takes (an ask addressed to someone
// ctx's caller is not, MayAnswer, is refused as one that is not pending:
// false, no error): the card's kind validates
// the values against its spec, the park is taken with the canonical
// payload in one write, exactly once (ok is false when it was not pending
// any more, with an *AskEndedError that says what became of it when the
// store knows), then ack runs (a caller queues its acknowledgement there,
// before any event of the resumed turn), then the kind's hooks with the
// values, and the turn resumes. The answer of the same card given in
// words (the submit_interaction tool) is validated and hooked alike.
func (e *Engine) Submit(ctx context.Context, sess *store.Session, parkID string, a Answer, ack func(Taken)) (ok bool, err error) {
	return e.submit(ctx, sess, parkID, a, personPath(ctx), ack)
}

// submit is Submit by the path via.
func (e *Engine) submit(ctx context.Context, sess *store.Session, parkID string, a Answer, via string, ack func(Taken)) (ok bool, err error) {
	p, spec, err := e.pending(ctx, sess.ConversationID, parkID, store.ParkInteraction)
	if err != nil {
		return false, err
	}
	if p == nil {
		return e.late(ctx, sess.ConversationID, parkID)
	}
	if !MayAnswer(ctx, e.AddressedTo(p)) {
		return false, nil // not the caller's to answer: as if it did not exist
	}
	defer func() {
		if !ok && err == nil {
			ok, err = e.late(ctx, sess.ConversationID, parkID) // taken meanwhile
		}
	}()
	if ack == nil {
		ack = func(Taken) {}
	}
	if a.Declined {
		return e.resolveAck(ctx, sess, p, store.ParkResolved, Result{Text: kindkit.Declined().JSON()}, via, func(t *turn) {
			ack(Taken{RequestID: t.requestID, Resumes: !t.notResumed})
		})
	}
	k, ok := e.cfg.Catalog.Kind(p.Kind)
	if !ok {
		return false, ErrKindNotHosted
	}
	card := asked{kind: k, current: k}
	if spec == nil {
		// Not raised by this process: its kind may have changed since.
		s, err := stateOf(p)
		if err != nil {
			return false, err
		}
		if card, ok, err = e.askedOf(p, s); err != nil {
			return false, err
		} else if !ok {
			e.kindChanged(ctx, p, s, nil)
			return false, nil // the deferred late says how it ended
		}
	}
	values, now, errs, err := card.take(p, spec, a.Values)
	if errors.Is(err, errUpgrade) {
		e.kindChanged(ctx, p, e.readState(p), err)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if len(errs) > 0 {
		return false, &InvalidAnswerError{Errors: errs}
	}
	return e.resolveAck(ctx, sess, p, store.ParkResolved, Result{Text: kindkit.Submitted(values).JSON()}, via, func(t *turn) {
		ack(Taken{RequestID: t.requestID, Values: values, Resumes: !t.notResumed})
		e.answeredAs(ctx, sess, p, now)
	})
}

// Confirm answers park parkID, the write confirmation that sess's
// conversation waits on: approved, the resumed turn runs the call; denied,
// it gets the denial as the call's result. ack runs once the answer is
// taken, before the turn resumes; ok is false when the confirmation was
// not pending any more (with an *AskEndedError, as for Submit).
func (e *Engine) Confirm(ctx context.Context, sess *store.Session, parkID string, approved bool, ack func(Taken)) (ok bool, err error) {
	d := Decided{Decision: Reject}
	if approved {
		d.Decision = Approve
	}
	return e.Decide(ctx, sess, parkID, d, ack)
}

// pending is park id of conversation conv, of type typ, with its kind's
// spec when it is at hand, while it may be pending: the one held here
// needs no read (the take says whether it is still pending), any other is
// read from the store. nil when it is not pending.
func (e *Engine) pending(ctx context.Context, conv, id string, typ store.ParkKind) (*store.Park, *kindkit.Spec, error) {
	e.mu.Lock()
	t := e.parked[conv]
	e.mu.Unlock()
	if t != nil {
		if w := t.parked.Load(); w != nil {
			if c := w.find(id, typ); c != nil {
				return c.park, c.spec, nil
			}
		}
	}
	ps, err := e.cfg.Store.PendingParks(ctx, conv)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range ps {
		if p.ID == id && p.Type == typ {
			return p, nil, nil
		}
	}
	return nil, nil, nil
}

// resolveAck takes park p, moving it to state with its answer r, in one
// write, for session sess (nil: the park's own). Only when the take
// succeeded it calls ack (the caller queues its acknowledgement, so it
// reaches the wire before the resumed stream) and resumes the turn. ok is
// false when the park was not pending any more.
func (e *Engine) resolveAck(ctx context.Context, sess *store.Session, p *store.Park, state store.ParkState, r Result, via string, ack func(*turn)) (bool, error) {
	answered := time.Now()
	t, resumes, err := e.resolve(ctx, sess, p, state, r, via)
	if t == nil || err != nil {
		return false, err
	}
	if state == store.ParkResolved {
		t.answeredAt = answered // an answer, not a deadline or a drain
	}
	if ack != nil {
		ack(t)
	}
	if !resumes {
		t.cancel() // a park of a group that others of it still wait on
		return true, nil
	}
	t.goRun(t.resumed)
	return true, nil
}

// resolve takes p with its answer and returns the resumed turn, not yet
// running (nil when the park was gone). resumes is false for a park of a
// group that other parks of it still wait on: the store said the take
// was not the group's last, and the turn, which t only names, resumes
// from the last. The answer is the tool result
// message, except in two cases where the call goes back to the front of
// the turn's pending calls instead: an approved confirmation (r is zero),
// marked approved, and a host tool's Ask, whose payload r is kept for the
// Ask to return when the tool runs again.
func (e *Engine) resolve(ctx context.Context, sess *store.Session, p *store.Park, state store.ParkState, r Result, via string) (t *turn, resumes bool, err error) {
	turn, err := stateOf(p)
	if err != nil {
		return nil, false, err
	}
	turn.Expiry, turn.KindVersion = nil, "" // the park's, which ends here
	var actor *store.Session
	decision := ""
	if via == ViaCard || via == ViaLink || via == ViaInbox {
		if via == ViaCard {
			actor = sess
		}
		if p.Type == store.ParkConfirmation {
			decision = decisionOf(decidedFrom(ctx), r)
		}
	}
	record := e.record(ctx, p, turn, via, actor, decision)
	var msgs []*store.Message
	var first *Event
	switch {
	case p.Type == store.ParkConfirmation && r == (Result{}):
		call := p.ToolCall
		if d := decidedFrom(ctx); d != nil && d.Decision == Edit {
			call.Arguments = string(d.Arguments)
			turn.Edited = call.ID
		}
		turn.Pending = append([]store.ToolCall{call}, turn.Pending...)
		turn.Approved = p.ToolCall.ID
	case turn.Asking != "" && p.Group != "":
		// One of a host tool's AskAll cards: the park's outcome keeps
		// this answer, and the run the group's last answer resumes reads
		// them all (gatherAnswers) before the tool runs again.
		turn.Pending = append([]store.ToolCall{p.ToolCall}, turn.Pending...)
		turn.Asking, turn.Live = "", "" // AskAt stays: the park's record of its place
	case turn.Asking != "":
		// A host tool's Ask: the tool runs again and its Ask returns this.
		answerAsk(&turn, p.ToolCall, r.Text)
	default:
		msgs = []*store.Message{toolMessage(p.ConversationID, p.ToolCall, r, e.clock.Now())}
		first = &Event{Kind: EventToolResult, Call: p.ToolCall, Text: r.Text, IsError: r.IsError}
	}
	if sess == nil {
		if sess, err = e.cfg.Store.Session(ctx, p.SessionID); err != nil {
			return nil, false, fmt.Errorf("resume: load session: %w", err)
		}
	}
	l := e.lease(p.ID)
	taken, ok, err := e.cfg.Store.TakePark(ctx, p.ID, store.Answer{State: state, Messages: msgs, Turn: turn.encode(), Lease: &l,
		Outcome: cardOutcome(p, state, r, decision), Record: record})
	if err != nil || !ok {
		return nil, false, err
	}
	e.parkEnded(p, turn, state)
	e.parkTaken(p.ConversationID, p.ID)
	old := e.unpark(p.ConversationID, p.ID)
	t = e.newTurn(sess, turn)
	if p.Group != "" && !taken.Owed {
		t.notResumed = true
		return t, false, nil // stored; the group's last take resumes the turn
	}
	t.inherit(old, msgs)
	if p.Group != "" {
		t.log = nil // the group's other answers were stored by other takes: read them
	}
	t.stored(msgs)
	t.first, t.after = first, p.ID
	e.hold(t, l) // after: a cancel may find it from then on
	return t, true, nil
}

// Outcomes of parks that did not end in a kind's payload, as the park
// keeps them for the history's summaries (store.Park.Outcome).
var (
	outcomeApproved  = json.RawMessage(`{"status":"approved"}`)
	outcomeEdited    = json.RawMessage(`{"status":"approved","edited":true}`)
	outcomeResponded = json.RawMessage(`{"status":"responded"}`)
	outcomeDenied    = json.RawMessage(`{"status":"denied"}`)
	outcomeExpired   = json.RawMessage(kindkit.NoResponse().JSON())
	outcomeCancelled = json.RawMessage(`{"status":"cancelled"}`) // stopped with Stop (cancel)
)

// cardOutcome is how park p's card ended when the take of state answers
// it with r: a kind's card keeps the payload the turn resumes with (a
// host tool's Ask too, though the payload is not a message), a write
// confirmation approved, denied or no_response. A fallback directive,
// which the person never saw as a card, has none.
func cardOutcome(p *store.Park, state store.ParkState, r Result, decision string) json.RawMessage {
	if p.Type == store.ParkConfirmation {
		switch {
		case state == store.ParkExpired:
			return outcomeExpired
		case decision == decisionEdited:
			return outcomeEdited
		case decision == decisionResponded:
			return outcomeResponded
		case r == (Result{}):
			return outcomeApproved
		}
		return outcomeDenied
	}
	var payload struct {
		Status kindkit.Status `json:"status"`
	}
	// json v2 with v1's options reads the one field in a third of
	// encoding/json's allocations (stateJSON).
	if r.IsError || jsonv2.Unmarshal([]byte(r.Text), &payload, stateJSON) != nil {
		return nil
	}
	switch payload.Status {
	case kindkit.StatusSubmitted, kindkit.StatusDeclined, kindkit.StatusNoResponse:
		return json.RawMessage(r.Text)
	}
	return nil
}

// toolMessage is the history entry of a tool call's result.
func toolMessage(conversationID string, call store.ToolCall, r Result, now time.Time) *store.Message {
	return &store.Message{ID: store.NewID(), ConversationID: conversationID, Role: store.RoleTool, Text: r.Text,
		ToolCallID: call.ID, ToolName: call.Name, IsError: r.IsError, CreatedAt: now.UTC()}
}

// Cancel ends turn requestID of conversation conv at a person's request,
// wherever it is: a turn that runs here, or in another process (told
// through the relay), stops and stops being owed; a parked one's park is
// cancelled. Every subscriber hears its cancelled event, the last of it.
// A turn that has finished is left as it is.
func (e *Engine) Cancel(ctx context.Context, conv, requestID string) {
	if requestID == "" {
		return
	}
	if t := e.find(conv, requestID); t != nil {
		e.cancel(ctx, t)
		return
	}
	p, err := e.cfg.Store.PendingPark(ctx, conv)
	switch {
	case err == nil && e.readState(p).RequestID == requestID:
		if e.cancelPark(ctx, p) {
			e.metrics.TurnFinished(OutcomeCancelled)
			e.observe(conv, Event{Kind: EventCancelled, RequestID: requestID, After: p.ID})
			return
		}
		if t := e.find(conv, requestID); t != nil {
			e.cancel(ctx, t) // answered meanwhile, and resumed here
			return
		}
	case err != nil && !errors.Is(err, store.ErrNotFound):
		e.log.Error("cancel: load park", "err", err)
	}
	e.stream.cancel(conv, requestID)
}

// cancel ends t, a turn that runs here or is parked and held here. A card
// shown is ended by the store's take, like its answer: the turn is told
// cancelled only when the cancel took it, so an answer racing the cancel
// either loses or is the one that counts, and then the run it resumed is
// stopped instead.
func (e *Engine) cancel(ctx context.Context, t *turn) {
	if !t.cancelUnlessShown() {
		t.cancel()
		return
	}
	w := t.parked.Load()
	conv := t.session.ConversationID
	taken := e.cancelPark(ctx, w.park)
	e.unpark(conv, w.park.ID)
	if taken {
		t.markCancelled()
		return
	}
	if r := e.find(conv, t.requestID); r != nil && r != t {
		e.cancel(ctx, r)
		return
	}
	e.stream.cancel(conv, t.requestID) // resumed in another process, if at all
}

// cancelPark takes park p cancelled, with the record of its turn's end
// (what it said before its card); false when it was not pending any more.
func (e *Engine) cancelPark(ctx context.Context, p *store.Park) bool {
	s := e.readState(p)
	ended := endedMessage(p.ConversationID, s.Text, false, e.clock.Now())
	taken, ok, err := e.cfg.Store.TakePark(ctx, p.ID, store.Answer{State: store.ParkCancelled, Outcome: outcomeCancelled,
		Messages: []*store.Message{ended}, Record: e.record(ctx, p, s, ViaCancel, nil, "")})
	if err != nil {
		e.log.Error("cancel park", "interactionId", p.ID, "err", err)
	}
	if !ok {
		return false
	}
	s = e.readState(taken)
	e.parkEnded(taken, s, store.ParkCancelled)
	e.parkTaken(p.ConversationID, p.ID)
	e.abandon(s)
	e.endGroup(ctx, p, ViaCancel)
	return true
}

// endGroup cancels the parks of p's group that are still pending, once p
// ended its turn (cancelled, withdrawn, or ended at its deadline): the
// turn will not resume, and nothing of it may still be answered.
func (e *Engine) endGroup(ctx context.Context, p *store.Park, via string) {
	if p.Group == "" {
		return
	}
	ps, err := e.cfg.Store.PendingParks(ctx, p.ConversationID)
	if err != nil {
		e.log.Error("end a group's parks", "interactionId", p.ID, "err", err)
		return
	}
	for _, o := range ps {
		if o.Group != p.Group {
			continue
		}
		s := e.readState(o)
		taken, ok, err := e.cfg.Store.TakePark(ctx, o.ID, store.Answer{State: store.ParkCancelled, Outcome: outcomeCancelled,
			Record: e.record(ctx, o, s, via, nil, "")})
		if err != nil {
			e.log.Error("end a group's park", "interactionId", o.ID, "err", err)
		}
		if ok {
			e.parkEnded(taken, s, store.ParkCancelled)
			e.parkTaken(o.ConversationID, o.ID)
		}
	}
}

// Abort ends turn requestID of conversation conv when it runs here in its
// first run, never parked: the client that sent it went away (closed its
// own socket, PROTOCOL.md §4.10), which aborts the turn it asked for. A
// turn that parked, or that an answer resumed, goes on; and only the
// process's death hands a turn on (its lease runs out, and another process
// takes it over).
func (e *Engine) Abort(conv, requestID string) {
	if t := e.find(conv, requestID); t != nil && t.after == "" && t.parked.Load() == nil {
		t.markCancelled()
		t.cancel()
	}
}

// withdrawnResult is the parked call's result when the person wrote a
// message instead of answering: the model reads what happened.
const withdrawnResult = `{"status":"withdrawn","message":"The person wrote a new message instead of answering; this request was withdrawn."}`

// withdrawal is the answer that withdraws pending park p, for a message
// that Send stores in the same write (Message.Withdraw): its tool call's
// result says the person wrote instead of answering.
func (e *Engine) withdrawal(ctx context.Context, p *store.Park, by *store.Session, via string, now time.Time) *store.Answer {
	msg := toolMessage(p.ConversationID, p.ToolCall, Result{Text: withdrawnResult, IsError: true}, now)
	return &store.Answer{State: store.ParkCancelled, Messages: []*store.Message{msg}, Outcome: json.RawMessage(withdrawnResult),
		Record: e.record(ctx, p, e.readState(p), via, by, "")}
}

// withdrawn tells what follows from the withdrawal of parks ps, the
// pending parks of one turn, once it is stored: the parks ended, and their
// turn was cancelled.
func (e *Engine) withdrawn(ps []*store.Park) {
	for _, p := range ps[1:] {
		e.parkEnded(p, e.readState(p), store.ParkCancelled)
		e.parkTaken(p.ConversationID, p.ID)
	}
	e.endedWithTurn(ps[0], e.readState(ps[0]), store.ParkCancelled)
}

// endedWithTurn tells what follows when park p ended (as state) and its
// turn s with it, once that is stored: every subscriber hears the turn's
// cancelled event.
func (e *Engine) endedWithTurn(p *store.Park, s turnState, state store.ParkState) {
	e.parkEnded(p, s, state)
	e.parkTaken(p.ConversationID, p.ID)
	e.abandon(s)
	if t := e.unpark(p.ConversationID, p.ID); t != nil {
		t.markCancelled()
	} else {
		e.metrics.TurnFinished(OutcomeCancelled)
		e.observe(p.ConversationID, Event{Kind: EventCancelled, RequestID: s.RequestID, After: p.ID})
	}
}

// PendingAsk is the ask conversation conv waits on (a card or a write
// confirmation), nil when none; when several are open (ParallelAsks), the
// first: for a transport that shows one at a time and must say what is
// open without showing it again (Rejoin) or answering it.
func (e *Engine) PendingAsk(ctx context.Context, conv string) (*store.Park, error) {
	p, err := e.cfg.Store.PendingPark(ctx, conv)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return p, err
}

// PendingAsks are all the asks conversation conv waits on, the first
// opened first: one, or the cards a model step opened together
// (ParallelAsks), each answered on its own. None when nothing waits.
func (e *Engine) PendingAsks(ctx context.Context, conv string) ([]*store.Park, error) {
	return e.cfg.Store.PendingParks(ctx, conv)
}

// Rejoin shows conversation conv's pending park to a client that joined it
// again on session sess: it returns what to show, in order: the words the
// turn said before its card (an EventText, when it said any), the prompt,
// and a confirmation's call (whose arguments are what is to be
// approved); when conv declared ParallelAsks, every pending park's prompt
// (and call), the first opened first, else the first's alone. It holds
// the parked turn while someone here subscribes to conv, so an answer
// needs no read. A kind's card that conv cannot show (its capability is
// not declared) is answered with the kind's conversational fallback
// instead, and the turn runs on; nil then, and when no park is pending.
func (e *Engine) Rejoin(ctx context.Context, sess *store.Session, conv *store.Conversation) []Event {
	ps, err := e.cfg.Store.PendingParks(ctx, conv.ID)
	if err != nil {
		e.log.Error("load pending park", "err", err)
		return nil
	}
	if len(ps) == 0 {
		return nil
	}
	if !supported(conv, ParallelAsks) {
		ps = ps[:1]
	}
	var held []*waiting
	var state turnState
	for _, p := range ps {
		s, ok := e.rejoinable(ctx, sess, conv, p)
		if ok {
			held = append(held, &waiting{park: p})
			state = s
		}
	}
	if len(held) == 0 {
		return nil
	}
	e.mu.Lock()
	if t := e.parked[conv.ID]; t == nil || !t.waitsOn(held[0].park.ID) {
		t := e.newTurn(sess, state)
		w := held[0]
		w.rest = held[1:]
		t.parked.Store(w)
		t.shown = true // by the caller, with the prompt returned
		t.cancel()     // a parked turn runs nothing
		e.parked[conv.ID] = t
	}
	e.mu.Unlock()
	var shown []Event
	if state.Text != "" {
		shown = append(shown, Event{Kind: EventText, RequestID: state.RequestID, Text: state.Text})
	}
	for _, w := range held {
		p := w.park
		shown = append(shown, Event{Kind: EventPrompt, RequestID: state.RequestID, Park: p})
		if p.Type == store.ParkConfirmation {
			shown = append(shown, Event{Kind: EventToolCall, RequestID: state.RequestID, Call: p.ToolCall})
		}
	}
	return shown
}

// rejoinable tells whether pending park p is to be shown again, with its
// turn's state; a park that cannot be (its question was lost, its kind
// changed, conv cannot show its card) is ended or answered here instead.
func (e *Engine) rejoinable(ctx context.Context, sess *store.Session, conv *store.Conversation, p *store.Park) (turnState, bool) {
	state, err := stateOf(p)
	if err != nil {
		e.log.Error("read parked turn", "err", err)
		return state, false
	}
	if e.lostLive(state) {
		// Its question was held open by a process that is gone: nobody
		// can take an answer to it, so rather than show the card the
		// turn goes on, and the tool's next run tells the model.
		e.log.Info("park's question was lost with its process", "interactionId", p.ID)
		if _, err := e.resolveAck(ctx, sess, p, store.ParkExpired, Result{Text: lostAnswer}, ViaLost, nil); err != nil {
			e.log.Error("resolve a lost question", "interactionId", p.ID, "err", err)
		}
		return state, false
	}
	if p.Type != store.ParkInteraction {
		return state, true
	}
	card, ok, err := e.askedOf(p, state)
	if err != nil {
		return state, false
	}
	if !ok {
		// Its kind changed since it was asked, and it can no longer
		// take an answer: rather than show a card nobody can answer,
		// its ask ends and the turn goes on.
		e.kindChanged(ctx, p, state, nil)
		return state, false
	}
	k := card.current
	if supported(conv, k.Descriptor().Capability) {
		return state, true
	}
	if state.Asking != "" {
		// A host tool's Ask waits for an answer the tool can take,
		// not a directive: the card stays for a client that can
		// show it.
		return state, false
	}
	if card.from != "" {
		// The fallback would tell the model to ask in words, and
		// submit_interaction checks those with the kind served
		// now: the card ends, and the model may ask again.
		e.kindChanged(ctx, p, state, nil)
		return state, false
	}
	spec, err := k.LoadSpec(p.Spec)
	if err != nil {
		e.log.Error("load parked spec", "interactionId", p.ID, "err", err)
		return state, false
	}
	state.stash(p.Kind, p.Spec)
	p.Turn = state.encode()
	if _, err := e.resolveAck(ctx, sess, p, store.ParkResolved, Result{Text: k.Fallback(spec, p.Reason)}, ViaFallback, nil); err != nil {
		e.log.Error("answer park with its fallback", "interactionId", p.ID, "err", err)
	}
	return state, false
}

// lostAnswer is the answer of a park whose question was lost with the
// process that held it open.
var lostAnswer = kindkit.Payload{Status: kindkit.StatusNoResponse,
	Message: "The question was lost: the process that held it open is gone."}.JSON()

// lostLive tells whether a park of state s waits on a question that another engine held
// open (AskLive) and that is certainly gone: its store is this process's
// alone, so that engine was an earlier run of this process. On a store
// that processes share the other engine may be alive, and the park waits
// for its answer or its deadline.
func (e *Engine) lostLive(s turnState) bool {
	if s.Live == "" || s.Live == e.owner {
		return false
	}
	sh, ok := e.cfg.Store.(store.Shared)
	return !ok || sh.Notifier() == nil
}

// abandon tells the tool sets that the Asking call of a park (of state
// turn) that ended unanswered will not run again.
func (e *Engine) abandon(turn turnState) {
	if turn.Asking == "" {
		return
	}
	for _, set := range e.cfg.ToolSets {
		if a, ok := set.(Abandoner); ok {
			a.Abandon(turn.Asking)
		}
	}
}

// answered runs the hooks of kind with an accepted answer, from a card
// (Submit) or from the conversation (the submit_interaction tool).
func (e *Engine) answered(ctx context.Context, sess *store.Session, kind string, values json.RawMessage) {
	a := kindkit.Answered{ConversationID: sess.ConversationID, SessionID: sess.ID}
	for _, h := range e.cfg.Hooks {
		if h.Kind != kind {
			continue
		}
		if err := h.Run(ctx, a, values); err != nil {
			e.log.Warn("answer hook failed", "kind", kind, "err", err)
		}
	}
}
