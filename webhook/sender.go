package webhook

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/store"
)

// Endpoint is a receiver of events: its URL (http or https) and the keys
// that sign what it is sent.
type Endpoint struct {
	URL  string
	Keys []Key
}

// Config is what a Sender is built from.
type Config struct {
	Endpoints []Endpoint
	// Timeout bounds one attempt, its response included (default 15s,
	// within the spec's 15 to 30). A delivery leases its event for twice
	// that: a process that dies mid-delivery leaves it to another, or to
	// its restart, once the lease has run out.
	Timeout time.Duration
	// PollInterval is how often an endpoint's worker looks for due events
	// when it found none (default 1s).
	PollInterval time.Duration
	// MaxAge is how long an event is retried, from when it happened
	// (default 72h, as Standard Webhooks' schedule); then it is given up,
	// logged and counted.
	MaxAge time.Duration
	// Client sends the requests; default one that follows no redirect (a
	// 3xx is a failure, as the spec says).
	Client *http.Client
	// Clock times attempts and retries; default the engine's.
	Clock clockwork.Clock
	// Logger gets a line for every failure; default the engine's.
	Logger *slog.Logger
	// Metrics is told every attempt's result; default none.
	Metrics Metrics
	// AnswerURL, when set, makes an ask.parked's answerUrl: an absolute
	// one-time answer link for the event's ask (link.Signer, link.URL).
	// It must make the same URL of the same event every time, so that
	// every attempt sends the same body: a link's expiry comes from the
	// event (its deadline, or when it parked), never from the clock.
	AnswerURL func(*store.OutboxEvent) string
}

// Metrics is told what becomes of each attempt, by endpoint label (its
// scheme and host, and its position when several share a host: never its
// path or query, which may hold a token).
type Metrics interface {
	// WebhookAttempt: an attempt to deliver an event ended with result:
	// ResultDelivered, ResultFailed, ResultGaveUp (failed, and the event
	// was too old to retry), ResultDisabled (410 Gone), or ResultError
	// (the store could not be read or written).
	WebhookAttempt(endpoint, result string)
}

// The results of WebhookAttempt.
const (
	ResultDelivered = "delivered"
	ResultFailed    = "failed"
	ResultGaveUp    = "gave_up"
	ResultDisabled  = "disabled"
	ResultError     = "error"
)

type nopMetrics struct{}

func (nopMetrics) WebhookAttempt(string, string) {}

// Retries wait 5s, then twice as long each time, up to 6h, and up to a
// tenth more at random (so that endpoints that failed together are not
// retried together); a Retry-After longer than that is honoured up to a
// day.
const (
	firstRetry    = 5 * time.Second
	maxRetry      = 6 * time.Hour
	maxRetryAfter = 24 * time.Hour
	// maxResponse is how much of a response is read (and thrown away)
	// so that its connection can be used again.
	maxResponse = 64 << 10
)

// Sender delivers the store's ask events to its endpoints: one worker per
// endpoint, from Start to Stop. It is the one owner of those workers.
type Sender struct {
	cfg       Config
	endpoints []*endpoint
	jitter    func(time.Duration) time.Duration

	mu      sync.Mutex // guards the fields below
	started bool
	out     store.Outbox
	owner   string // this sender's name on its leases
	clock   clockwork.Clock
	log     *slog.Logger
	stop    context.CancelFunc
	wg      sync.WaitGroup
}

type endpoint struct {
	url      string
	keys     []Key
	consumer string // the outbox's name for it: a digest of its URL
	label    string // for logs and metrics: scheme://host, never the path or query
	disabled atomic.Bool
}

// New checks cfg and returns a sender that has not started.
func New(cfg Config) (*Sender, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("webhook: no endpoint")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 15 * time.Second
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = 72 * time.Hour
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if cfg.Metrics == nil {
		cfg.Metrics = nopMetrics{}
	}
	s := &Sender{cfg: cfg, jitter: func(d time.Duration) time.Duration { return d + rand.N(d/10+1) }}
	hosts := map[string]int{}
	for i, ep := range cfg.Endpoints {
		u, err := url.Parse(ep.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			// The URL may hold a token: the error names its position only.
			return nil, fmt.Errorf("webhook: endpoint %d: want an absolute http:// or https:// URL", i+1)
		}
		if len(ep.Keys) == 0 {
			return nil, fmt.Errorf("webhook: endpoint %d (%s://%s): no signing key", i+1, u.Scheme, u.Host)
		}
		sum := sha256.Sum256([]byte(ep.URL))
		e := &endpoint{url: ep.URL, keys: ep.Keys, consumer: "webhook:" + hex.EncodeToString(sum[:16]), label: u.Scheme + "://" + u.Host}
		for _, have := range s.endpoints {
			if have.consumer == e.consumer {
				return nil, fmt.Errorf("webhook: endpoint %d (%s) is given twice", i+1, e.label)
			}
		}
		hosts[e.label]++
		if n := hosts[e.label]; n > 1 {
			e.label += "#" + strconv.Itoa(n)
		}
		s.endpoints = append(s.endpoints, e)
	}
	return s, nil
}

// Consumers are the outbox's names of the sender's endpoints: give them
// to the engine (agent.Config.Outbox), so that it writes their events
// from its first park on.
func (s *Sender) Consumers() []string {
	out := make([]string, len(s.endpoints))
	for i, e := range s.endpoints {
		out[i] = e.consumer
	}
	return out
}

// Endpoints are the endpoints' labels, as logs and metrics name them:
// scheme and host, never a path or query.
func (s *Sender) Endpoints() []string {
	out := make([]string, len(s.endpoints))
	for i, e := range s.endpoints {
		out[i] = e.label
	}
	return out
}

// Start delivers eng's ask events until Stop. The engine must write them
// (agent.Config.Outbox = s.Consumers()).
func (s *Sender) Start(eng *agent.Engine) error {
	if err := s.attach(eng); err != nil {
		return err
	}
	ctx, stop := context.WithCancel(context.Background())
	s.mu.Lock()
	s.stop = stop
	s.mu.Unlock()
	for _, e := range s.endpoints {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.run(ctx, e)
		}()
	}
	return nil
}

// attach readies s to deliver eng's events.
func (s *Sender) attach(eng *agent.Engine) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("webhook: started twice")
	}
	out := store.OutboxOf(eng.Store())
	if out == nil {
		return fmt.Errorf("webhook: the engine's store (%T) keeps no outbox", eng.Store())
	}
	for _, e := range s.endpoints {
		if !out.OutboxOpen(e.consumer) {
			return fmt.Errorf("webhook: the engine writes no events for %s: give agent.Config.Outbox the sender's Consumers()", e.label)
		}
	}
	s.started, s.out, s.owner = true, out, uuid.NewString()
	s.clock, s.log = s.cfg.Clock, s.cfg.Logger
	if s.clock == nil {
		s.clock = eng.Clock()
	}
	if s.log == nil {
		s.log = eng.Logger()
	}
	return nil
}

// Stop ends the workers and waits for them: an attempt on its way is
// abandoned, and its event is delivered again once its lease has run out
// (by this process's next start, or another's).
func (s *Sender) Stop() {
	s.mu.Lock()
	stop := s.stop
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	s.wg.Wait()
}

// run delivers e's due events, then looks again every PollInterval.
func (s *Sender) run(ctx context.Context, e *endpoint) {
	for {
		s.deliverDue(ctx, e)
		if e.disabled.Load() {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-s.clock.After(s.cfg.PollInterval):
		}
	}
}

// deliverDue delivers e's events that are due, one lease at a time, until
// none is (or ctx ends, or e is disabled).
func (s *Sender) deliverDue(ctx context.Context, e *endpoint) {
	for ctx.Err() == nil && !e.disabled.Load() {
		now := s.clock.Now()
		ev, err := s.out.LeaseEvent(ctx, e.consumer, s.owner, now, now.Add(2*s.cfg.Timeout))
		if err != nil {
			if ctx.Err() == nil {
				s.cfg.Metrics.WebhookAttempt(e.label, ResultError)
				s.log.Error("webhook: lease an event", "endpoint", e.label, "err", err)
			}
			return
		}
		if ev == nil {
			return
		}
		s.deliver(ctx, e, ev)
	}
}

// deliver makes one attempt at ev, and records what came of it.
func (s *Sender) deliver(ctx context.Context, e *endpoint, ev *store.OutboxEvent) {
	b, err := body(ev, s.cfg.AnswerURL)
	if err != nil { // an event always marshals
		s.log.Error("webhook: event body", "endpoint", e.label, "eventId", ev.ID, "err", err)
		return
	}
	status, retryAfter, err := s.post(ctx, e, ev.ID, b)
	if err != nil && ctx.Err() != nil {
		return // stopped mid-attempt: the lease runs out, and the event goes again
	}
	// What came of an attempt is recorded even when Stop came meanwhile:
	// a delivered event is not sent again for want of a short write.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Timeout)
	defer cancel()
	switch {
	case err == nil && status >= 200 && status < 300:
		if err := s.out.EventDone(ctx, e.consumer, ev.ID); err != nil {
			s.cfg.Metrics.WebhookAttempt(e.label, ResultError)
			s.log.Error("webhook: delivered, but not marked so: it will be sent again", "endpoint", e.label, "eventId", ev.ID, "err", err)
			return
		}
		s.cfg.Metrics.WebhookAttempt(e.label, ResultDelivered)
		s.log.Debug("webhook delivered", "endpoint", e.label, "eventId", ev.ID, "type", ev.Type, "status", status)
	case err == nil && status == http.StatusGone:
		e.disabled.Store(true)
		s.cfg.Metrics.WebhookAttempt(e.label, ResultDisabled)
		s.log.Warn("webhook endpoint answered 410 Gone: disabled until the process restarts; its events are dropped", "endpoint", e.label, "eventId", ev.ID)
		if err := s.out.CloseOutbox(ctx, e.consumer); err != nil {
			s.log.Error("webhook: drop a disabled endpoint's events", "endpoint", e.label, "err", err)
		}
	default:
		s.failed(ctx, e, ev, status, retryAfter, err)
	}
}

// failed records a failed attempt at ev: it is retried after a backoff
// (or Retry-After), or given up once older than MaxAge.
func (s *Sender) failed(ctx context.Context, e *endpoint, ev *store.OutboxEvent, status int, retryAfter time.Duration, cause error) {
	s.cfg.Metrics.WebhookAttempt(e.label, ResultFailed)
	attempt := ev.Attempts + 1
	why := []any{"endpoint", e.label, "eventId", ev.ID, "type", ev.Type, "attempt", attempt}
	if cause != nil {
		why = append(why, "err", cause)
	} else {
		why = append(why, "status", status)
	}
	now := s.clock.Now()
	if now.Sub(ev.At) >= s.cfg.MaxAge {
		s.cfg.Metrics.WebhookAttempt(e.label, ResultGaveUp)
		s.log.Error("webhook delivery failed; giving up, the event is older than the retry window", append(why, "age", now.Sub(ev.At).Round(time.Second))...)
		if err := s.out.EventDone(ctx, e.consumer, ev.ID); err != nil {
			s.log.Error("webhook: give up an event", "endpoint", e.label, "eventId", ev.ID, "err", err)
		}
		return
	}
	delay := s.jitter(min(firstRetry<<min(attempt-1, 30), maxRetry))
	if retryAfter > delay {
		delay = min(retryAfter, maxRetryAfter)
	}
	next := now.Add(delay)
	s.log.Warn("webhook delivery failed; will retry", append(why, "retryIn", delay.Round(time.Millisecond))...)
	if err := s.out.RetryEvent(ctx, e.consumer, ev.ID, s.owner, next); err != nil {
		if !errors.Is(err, store.ErrLeaseLost) {
			s.cfg.Metrics.WebhookAttempt(e.label, ResultError)
		}
		s.log.Error("webhook: schedule a retry", "endpoint", e.label, "eventId", ev.ID, "err", err)
	}
}

// post sends one attempt: the status and Retry-After of the response, or
// why there was none (an error that names no URL: it may hold a token).
func (s *Sender) post(ctx context.Context, e *endpoint, id string, b []byte) (int, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(b))
	if err != nil {
		return 0, 0, errors.New("the URL makes no request")
	}
	ts := strconv.FormatInt(s.clock.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "kindkit-webhook")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", ts)
	req.Header.Set("webhook-signature", signature(e.keys, id, ts, b))
	resp, err := s.cfg.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no response within %s", s.cfg.Timeout)
		}
		return 0, 0, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse))
	resp.Body.Close()
	return resp.StatusCode, retryAfter(resp.Header.Get("Retry-After"), s.clock.Now()), nil
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date; 0 when
// there is none or it does not parse.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, int64(maxRetryAfter/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
