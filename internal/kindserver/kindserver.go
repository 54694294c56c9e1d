package kindserver

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/agent/anthropic"
	"github.com/kindkit/kindkit/agent/mcp"
	"github.com/kindkit/kindkit/agent/openai"
	"github.com/kindkit/kindkit/agui"
	"github.com/kindkit/kindkit/gen/elicitationgen"
	"github.com/kindkit/kindkit/gen/identityintakegen"
	"github.com/kindkit/kindkit/inbox"
	"github.com/kindkit/kindkit/internal/debugstats"
	"github.com/kindkit/kindkit/internal/demo"
	"github.com/kindkit/kindkit/internal/telemetry"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/kinds/elicitation"
	"github.com/kindkit/kindkit/kinds/identityintake"
	"github.com/kindkit/kindkit/knowledge"
	"github.com/kindkit/kindkit/link"
	"github.com/kindkit/kindkit/server"
	kindstore "github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/dsn"
	"github.com/kindkit/kindkit/web"
	"github.com/kindkit/kindkit/webhook"
)

// loadKinds is kinds.All with identity_intake reading national phone numbers
// in region.
func loadKinds(region string) (*kindkit.Catalog, error) {
	all, err := kinds.All()
	if err != nil {
		return nil, err
	}
	intake, err := identityintakegen.New(identityintake.Rules{Region: region})
	if err != nil {
		return nil, err
	}
	list := slices.Clone(all.Kinds())
	for i, k := range list {
		if k.Descriptor().Name == identityintakegen.Name {
			list[i] = intake
		}
	}
	return kindkit.NewCatalog(list...)
}

// Run serves until ctx is cancelled, then drains; it returns the exit
// status.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kindserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8787", "address to listen on")
	title := fs.String("title", "", "the chat page's title and heading; empty: kindkit chat")
	modelName := fs.String("model", "demo", "the agent's model: demo (built in), scripted (with -script), openai (any OpenAI-compatible server; the key comes from $OPENAI_API_KEY) or anthropic (Claude; the key comes from $ANTHROPIC_API_KEY)")
	script := fs.String("script", "", "run the scripted model from `FILE`: a mockLlmScript array or a whole scenario file (implies -model scripted)")
	openaiURL := fs.String("openai-base-url", "https://api.openai.com/v1", "with -model openai: the chat-completions server, e.g. http://127.0.0.1:11434/v1 for Ollama")
	openaiModel := fs.String("openai-model", "gpt-4o-mini", "with -model openai: the model name")
	anthropicURL := fs.String("anthropic-base-url", anthropic.DefaultBaseURL, "with -model anthropic: the Messages API's root, without /v1")
	anthropicModel := fs.String("anthropic-model", "claude-sonnet-4-5", "with -model anthropic: the model name")
	system := fs.String("system", "", "with -model openai or anthropic: a system prompt")
	retention := fs.Duration("memory-retention", time.Hour, "with -store memory: forget a conversation unused this long (and without a pending card)")
	storeDSN := fs.String("store", "sqlite:./kindkit.db", "where conversations and parks live, as a `DSN`: memory, sqlite:PATH or postgres://…")
	authSecret := fs.String("auth-secret", "", "HS256 secret for bearer tokens (?token= on /ws; an Authorization: Bearer header or ?token= on /agui) that scope conversations to their owner (or $KINDKIT_AUTH_SECRET); without it a conversation id (an AG-UI threadId) is its bearer secret")
	knowledgeDir := fs.String("knowledge", "", "search the .md, .markdown and .txt files under `DIR` with each message: the best go to the model and, as citations, to the client")
	parkTimeout := fs.Duration("park-timeout", 24*time.Hour, "how long a parked interaction waits by default (an Ask or its kind may set its own)")
	toolDecisions := fs.String("tool-decisions", "approve,reject", "what a person may decide on a tool call that waits for them (a script's confirmTools): a comma-separated set of approve, reject, edit (run it with their arguments) and respond (their words stand in for its result)")
	onExpiry := fs.String("on-expiry", string(kindkit.ExpireNoResponse), "what a parked interaction's deadline resolves it to by default: `no_response` or end_turn (the turn stops with its card)")
	leaseTimeout := fs.Duration("lease-timeout", 15*time.Second, "how long a resumed turn stays this process's without a renewal; a turn whose process died is finished by the next one (or, on PostgreSQL, any other) once its lease has run out")
	drainTimeout := fs.Duration("drain-timeout", 30*time.Second, "how long SIGTERM waits for turns to finish")
	audience := fs.String("auth-audience", "", "with -auth-secret: the aud a token must name")
	issuer := fs.String("auth-issuer", "", "with -auth-secret: the iss a token must carry")
	origins := fs.String("allowed-origins", "", "comma-separated host `PATTERNS` (path.Match syntax, e.g. example.com,*.example.com) whose browser pages may open a socket or run the agent at /agui besides the server's own; * allows every origin; empty, the server's own only")
	frameRate := fs.Float64("frame-rate", 20, "frames per second one connection may send (beyond -frame-burst); more are answered RATE_LIMITED; negative: no bound")
	frameBurst := fs.Int("frame-burst", 40, "frames one connection may send at once")
	maxConns := fs.Int("max-connections", 10000, "open sockets at most (and AG-UI runs streaming at most); one more gets 503")
	clientFrameRate := fs.Float64("client-frame-rate", 200, "frames per second one client (its principal; its IP address when anonymous) may send across its connections, and AG-UI runs it may start (beyond -client-frame-burst); negative: no bound")
	clientFrameBurst := fs.Int("client-frame-burst", 400, "frames one client may send at once")
	convRate := fs.Float64("conversation-rate", 10, "conversations (and AG-UI threads) per second one client may create (beyond -conversation-burst); more get RATE_LIMITED (429 on /agui); negative: no bound")
	convBurst := fs.Int("conversation-burst", 100, "conversations one client may create at once")
	phoneRegion := fs.String("phone-region", identityintake.DefaultRegion, "identity_intake reads a phone number without a country code in the national notation of `REGION` (a CLDR code: GB reads 07911 123456 as +447911123456)")
	idleTimeout := fs.Duration("idle-timeout", time.Minute, "close a socket that does not answer a ping within this (one goes out every half of it); negative: never")
	var mcpSources []mcp.Source
	fs.Func("mcp", "use the tools of an MCP server, as `NAME=COMMAND [ARGS…]` (kindkit starts it, stdio) or NAME=https://…/mcp (streamable HTTP); the model sees them as NAME__tool; repeatable", func(v string) error {
		src, err := mcp.ParseSource(v)
		if err == nil {
			mcpSources = append(mcpSources, src)
		}
		return err
	})
	var webhookURLs []string
	fs.Func("webhook-url", "POST each ask's events (ask.parked, ask.resolved) to `URL`, signed as Standard Webhooks with the keys in $KINDKIT_WEBHOOK_SECRET (docs/webhooks.md); repeatable", func(v string) error {
		webhookURLs = append(webhookURLs, v)
		return nil
	})
	webhookTimeout := fs.Duration("webhook-timeout", 15*time.Second, "with -webhook-url: how long one delivery attempt may take; a process that dies mid-delivery leaves the event to another (or its restart) after twice this")
	publicURL := fs.String("public-url", "", "the server's address as people outside reach it (scheme, host and any path prefix, e.g. https://chat.example.com): with $KINDKIT_LINK_SECRET, an ask.parked webhook carries an answerUrl, a one-time answer link under it (docs/links.md)")
	linkTTL := fs.Duration("link-ttl", 72*time.Hour, "how long an answer link to an ask without a deadline lives, from when it parked (a link to an ask with a deadline lives until it)")
	serveMetrics := fs.Bool("metrics", true, "serve Prometheus metrics at /metrics on -addr; like /healthz it asks for no auth, so keep it off a public listener's path (a proxy rule) or turn it off")
	verbose := fs.Bool("v", false, "log debug messages")
	debugAddr := fs.String("debug-addr", "", "serve /debug/stats (memory and goroutine counts, for kindload) and /debug/pprof/ on a second listener at `ADDR`, never on -addr; they ask for no auth, so keep ADDR private (e.g. 127.0.0.1:6060); empty: off")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kindserver: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	if err := identityintake.CheckRegion(*phoneRegion); err != nil {
		fmt.Fprintf(stderr, "kindserver: -phone-region: %v\n", err)
		return 2
	}
	catalog, err := loadKinds(*phoneRegion)
	if err != nil {
		log.Error("load kinds", "err", err)
		return 1
	}
	tracer, stopTracing, err := telemetry.Tracing(ctx, os.Getenv)
	if err != nil {
		log.Error("tracing", "err", err)
		return 2
	}
	tracing, _ := telemetry.TracingWanted(os.Getenv)
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := stopTracing(sctx); err != nil {
			log.Warn("flush traces", "err", err)
		}
	}()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics := telemetry.NewMetrics(reg)
	signer, err := links(os.Getenv("KINDKIT_LINK_SECRET"), *publicURL, log)
	if err != nil {
		log.Error(err.Error())
		return 2
	}
	var answerURL func(*kindstore.OutboxEvent) string
	if signer != nil && *publicURL != "" {
		answerURL = signer.AnswerURL(*publicURL, *linkTTL)
	}
	sender, publicKeys, err := webhooks(webhookURLs, os.Getenv("KINDKIT_WEBHOOK_SECRET"), *webhookTimeout, answerURL, log, metrics)
	if err != nil {
		log.Error(err.Error())
		return 2
	}
	store, closeStore, err := dsn.Open(ctx, *storeDSN, &dsn.Options{MemoryRetention: *retention})
	if err != nil {
		log.Error("open store", "store", dsn.Redact(*storeDSN), "err", err)
		return 1
	}
	defer closeStore()
	secret := *authSecret
	if secret == "" {
		secret = os.Getenv("KINDKIT_AUTH_SECRET")
	}
	switch kindkit.Expiry(*onExpiry) {
	case kindkit.ExpireNoResponse, kindkit.ExpireEndTurn:
	default:
		log.Error("-on-expiry must be no_response or end_turn (a default answer is an Ask's or a kind's, per kind)", "value", *onExpiry)
		return 2
	}
	decisions, err := agent.ParseDecisions(*toolDecisions)
	if err != nil || decisions&agent.Approve == 0 || decisions&agent.Reject == 0 {
		log.Error("-tool-decisions must name approve and reject, and may add edit and respond", "value", *toolDecisions)
		return 2
	}
	var allowed []string
	for _, o := range strings.Split(*origins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			allowed = append(allowed, o)
		}
	}
	cfg := agent.Config{Catalog: catalog, Store: metrics.Store(store), Model: demo.Model{}, Hooks: hooks(store), ParkTimeout: *parkTimeout,
		OnExpiry: kindkit.Expiry(*onExpiry), LeaseTimeout: *leaseTimeout, Logger: log, KeepParksOnDrain: *storeDSN != "memory", TracerProvider: tracer, Metrics: metrics}
	wire := server.Options{AllowedOrigins: allowed, FrameRate: *frameRate, FrameBurst: *frameBurst, MaxConnections: *maxConns,
		ClientFrameRate: *clientFrameRate, ClientFrameBurst: *clientFrameBurst, ConversationRate: *convRate, ConversationBurst: *convBurst,
		IdleTimeout: *idleTimeout, AuthRules: server.TokenRules{Audience: *audience, Issuer: *issuer}, AuthSecret: []byte(secret)}
	if *script != "" && *modelName == "demo" {
		*modelName = "scripted"
	}
	switch *modelName {
	case "demo":
	case "scripted":
		if *script == "" {
			log.Error("-model scripted needs -script FILE")
			return 2
		}
		f, err := agent.LoadScript(*script)
		if err != nil {
			log.Error("load script", "file", *script, "err", err)
			return 1
		}
		cfg.Model, _ = agent.NewScripted(f.Script)
		cfg.Tools = f.Tools
		if len(f.ConfirmTools) > 0 {
			cfg.Confirm = agent.ConfirmMatching(decisions, f.ConfirmTools...)
		}
		if len(f.Knowledge) > 0 {
			index, err := knowledge.New(f.Knowledge)
			if err != nil {
				log.Error("load script", "file", *script, "err", err)
				return 1
			}
			cfg.Knowledge = index
		}
	case "openai":
		m, err := openai.New(openai.Config{BaseURL: *openaiURL, Model: *openaiModel, APIKey: os.Getenv("OPENAI_API_KEY"), System: *system, Logger: log})
		if err != nil {
			log.Error("openai model", "err", err)
			return 2
		}
		cfg.Model = m
		log.Info("model", "kind", "openai", "baseURL", *openaiURL, "model", *openaiModel, "key", os.Getenv("OPENAI_API_KEY") != "")
	case "anthropic":
		// The key is read from the environment only, never from a flag,
		// and never logged: only whether there is one.
		key := os.Getenv("ANTHROPIC_API_KEY")
		m, err := anthropic.New(anthropic.Config{BaseURL: *anthropicURL, Model: *anthropicModel, APIKey: key, System: *system, Logger: log})
		if err != nil {
			log.Error("anthropic model", "err", err)
			return 2
		}
		cfg.Model = m
		log.Info("model", "kind", "anthropic", "baseURL", *anthropicURL, "model", *anthropicModel, "key", key != "")
	default:
		log.Error("unknown -model (want demo, scripted, openai or anthropic)", "model", *modelName)
		return 2
	}
	if *knowledgeDir != "" {
		if cfg.Knowledge != nil {
			log.Error("-knowledge and a script's server.knowledge both give knowledge; use one")
			return 2
		}
		index, err := knowledge.LoadDir(*knowledgeDir)
		if err != nil {
			log.Error("load knowledge", "err", err)
			return 1
		}
		cfg.Knowledge = index
		log.Info("knowledge", "dir", *knowledgeDir, "documents", index.Len())
	}
	for _, src := range mcpSources {
		// A server's question waits as long as its card, and a minute
		// more, so that the deadline's cancel reaches the server first.
		src.ElicitTimeout = cfg.ParkTimeout + time.Minute
		src.Ask = &mcp.CardKind{Name: elicitationgen.Name, Spec: elicitation.MCPSpec, URLSpec: elicitation.MCPURLSpec}
		m, err := mcp.Start(ctx, src, log)
		if err != nil {
			log.Error("start mcp server", "mcpServer", src.Name, "err", err)
			return 1
		}
		defer m.Close()
		cfg.ToolSets = append(cfg.ToolSets, m)
	}
	if sender != nil {
		cfg.Outbox = sender.Consumers()
	}
	eng, err := agent.NewEngine(cfg)
	if err != nil {
		log.Error("start", "err", err)
		return 1
	}
	if sender != nil {
		if err := sender.Start(eng); err != nil {
			eng.Close()
			log.Error("start webhooks", "err", err)
			return 1
		}
		defer sender.Stop() // after the engine's shutdown: what is left goes out from the next start
		log.Info("webhooks", "endpoints", sender.Endpoints(), "ed25519PublicKeys", publicKeys)
	}
	srv := server.New(eng, wire)
	// AG-UI at /agui, with /ws's auth and limits: a run counts as a frame
	// of its client, a new thread as a new conversation.
	ag := agui.New(eng, agui.Options{AuthSecret: wire.AuthSecret, AuthRules: wire.AuthRules, AllowedOrigins: wire.AllowedOrigins,
		MaxRuns: wire.MaxConnections, ClientRunRate: wire.ClientFrameRate, ClientRunBurst: wire.ClientFrameBurst,
		ConversationRate: wire.ConversationRate, ConversationBurst: wire.ConversationBurst, Logger: log})
	metrics.WatchConnections(srv.Connections)
	// Served before it hears the other processes that share its store, a
	// process would show its sockets a turn that runs elsewhere without
	// its events (TestTwoProcessesOnePostgres failed so in CI once).
	rctx, cancel := context.WithTimeout(ctx, fanOutWait)
	if err := eng.RelayReady(rctx); err != nil {
		log.Warn("fan-out: not hearing the other processes yet; serving anyway", "err", err)
	}
	cancel()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		eng.Close()
		log.Error("listen", "addr", *addr, "err", err)
		return 1
	}
	served := make(chan error, 2)
	var debug *http.Server
	if *debugAddr != "" { // printed first: the main line says all is up
		dln, err := net.Listen("tcp", *debugAddr)
		if err != nil {
			ln.Close()
			eng.Close()
			log.Error("listen", "debugAddr", *debugAddr, "err", err)
			return 1
		}
		fmt.Fprintf(stdout, "kindkit debug listening on http://%s/debug/stats and http://%s/debug/pprof/\n", dln.Addr(), dln.Addr())
		debug = &http.Server{Handler: debugMux(), ReadHeaderTimeout: 10 * time.Second}
		go func() { served <- debug.Serve(dln) }()
	}
	log.Info("serving", "agui", "/agui", "store", dsn.Redact(*storeDSN), "auth", secret != "", "parkTimeout", *parkTimeout, "metrics", *serveMetrics, "tracing", tracing)
	fmt.Fprintf(stdout, "kindkit listening on ws://%s/ws (chat page: http://%s/)\n", ln.Addr(), ln.Addr())
	mux := http.NewServeMux()
	mux.Handle("/ws", srv)
	mux.Handle("/agui", http.StripPrefix("/agui", ag))
	mux.Handle("/agui/", http.StripPrefix("/agui", ag))
	mux.Handle("/healthz", srv)
	mux.Handle("/readyz", srv)
	if signer != nil {
		// Its two calls only: /answer itself is the page (web), which a
		// subtree pattern would redirect.
		answers := link.NewHandler(eng, link.Options{Signer: signer, AuthSecret: wire.AuthSecret, AuthRules: wire.AuthRules, Logger: log})
		mux.Handle("/answer/ask", answers)
		mux.Handle("/answer/submit", answers)
	}
	// The inbox's two calls (the page, /inbox, is web's): off, and saying
	// it needs auth, without an auth secret.
	asks := inbox.NewHandler(eng, inbox.Options{AuthSecret: wire.AuthSecret, AuthRules: wire.AuthRules, Logger: log})
	mux.Handle("/inbox/asks", asks)
	mux.Handle("/inbox/submit", asks)
	if *serveMetrics {
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}))
	}
	var page []web.Option
	if *title != "" {
		page = append(page, web.WithTitle(*title))
	}
	mux.Handle("/", web.Handler(catalog, page...))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		if debug != nil {
			debug.Close()
		}
		hs.Close()
		eng.Close()
		log.Error("serve", "err", err)
		return 1
	case <-ctx.Done():
	}
	log.Info("draining")
	dctx, cancel := context.WithTimeout(context.Background(), *drainTimeout)
	defer cancel()
	// Both wires stop taking work at once; AG-UI's runs end as their
	// turns finish in the drain.
	aguiDone := make(chan struct{})
	go func() {
		defer close(aguiDone)
		if err := ag.Shutdown(dctx); err != nil {
			log.Warn("agui drain", "err", err)
		}
	}()
	if err := srv.Shutdown(dctx); err != nil {
		log.Warn("drain", "err", err)
	}
	<-aguiDone
	if err := hs.Shutdown(dctx); err != nil {
		log.Warn("http shutdown", "err", err)
	}
	// The turns the drain left running finish, or stay owed to the next
	// process when the drain timeout ends first.
	if err := eng.Shutdown(dctx); err != nil {
		log.Warn("engine shutdown", "err", err)
	}
	eng.Close()
	if debug != nil {
		if err := debug.Shutdown(dctx); err != nil {
			log.Warn("debug http shutdown", "err", err)
		}
	}
	log.Info("stopped")
	return 0
}

// fanOutWait bounds the wait at start for the fan-out to hear this
// process's own notes (a shared store's bus down must not keep it from
// serving).
const fanOutWait = 10 * time.Second

// debugMux serves the -debug-addr listener. It is apart from the main one,
// which may face the internet, since neither handler asks who is calling.
func debugMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/stats", debugstats.Handler)
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	return mux
}

// links is the signer of answer links, from $KINDKIT_LINK_SECRET (nil,
// no links, when it is not set). There is no generated default: a link
// made by one process must verify in every other, and after a restart.
func links(secret, publicURL string, log *slog.Logger) (*link.Signer, error) {
	if secret == "" {
		if publicURL != "" {
			return nil, errors.New("-public-url makes answer links, which need $KINDKIT_LINK_SECRET: one or more secrets of at least 32 bytes, separated by spaces (the first signs)")
		}
		return nil, nil
	}
	if publicURL != "" {
		u, err := url.Parse(publicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, errors.New("-public-url must be an absolute http or https URL without a query or fragment")
		}
	} else {
		log.Warn("KINDKIT_LINK_SECRET is set, but no -public-url: answer links are served, but no webhook carries one")
	}
	s, err := link.ParseSecrets(secret)
	if err != nil {
		return nil, fmt.Errorf("KINDKIT_LINK_SECRET: %w", err)
	}
	return s, nil
}

// webhooks is the sender for the -webhook-url endpoints, signing with the
// keys of secret ($KINDKIT_WEBHOOK_SECRET), and the public keys of its
// Ed25519 keys (which receivers verify v1a with, and may be logged); nil
// when no URL is given. Its errors name no key and no URL: either may
// hold a secret.
func webhooks(urls []string, secret string, timeout time.Duration, answerURL func(*kindstore.OutboxEvent) string, log *slog.Logger, metrics webhook.Metrics) (*webhook.Sender, []string, error) {
	if len(urls) == 0 {
		if secret != "" {
			log.Warn("KINDKIT_WEBHOOK_SECRET is set, but no -webhook-url: no webhook is sent")
		}
		return nil, nil, nil
	}
	if strings.TrimSpace(secret) == "" {
		return nil, nil, errors.New("-webhook-url needs $KINDKIT_WEBHOOK_SECRET: whsec_<base64> (an HMAC secret) or whsk_<base64> (an Ed25519 key), several separated by spaces")
	}
	keys, err := webhook.ParseKeys(secret)
	if err != nil {
		return nil, nil, fmt.Errorf("KINDKIT_WEBHOOK_SECRET: %w", err)
	}
	if timeout <= 0 {
		return nil, nil, errors.New("-webhook-timeout must be positive")
	}
	var publicKeys []string
	for _, k := range keys {
		if pk := k.PublicKey(); pk != "" {
			publicKeys = append(publicKeys, pk)
		}
	}
	eps := make([]webhook.Endpoint, len(urls))
	for i, u := range urls {
		eps[i] = webhook.Endpoint{URL: u, Keys: keys}
	}
	s, err := webhook.New(webhook.Config{Endpoints: eps, Timeout: timeout, Logger: log, Metrics: metrics, AnswerURL: answerURL})
	if err != nil {
		return nil, nil, fmt.Errorf("-webhook-url: %w", err)
	}
	return s, publicKeys, nil
}
