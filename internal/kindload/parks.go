package kindload

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/sqlstore"
)

// ParksConfig is what parks mode needs besides Config.
type ParksConfig struct {
	Steps   []int  // fill the store up to each of these numbers of pending parks in turn, ascending
	Store   string // the store's DSN: sqlite:PATH or postgres://…
	Server  string // the kindserver binary to start on it
	Resumes int    // conversations resumed at each step
	Batch   int    // parks written in one transaction of the fill
	Ticks   int    // sweep ticks of the server to average; 0: sweepTicks
	// FillIDs is "v4" to fill with random ids, as kindkit made them
	// before its keys were time-ordered; else v7, as it makes them now.
	FillIDs string
}

// ParksReport is what parks mode measured, a step per number of parks.
type ParksReport struct {
	Mode  string      `json:"mode"`
	Store string      `json:"store"` // the dialect
	Steps []ParksStep `json:"steps"`
}

// ParksStep is one step of parks mode: the store holding Parks pending
// parks, each in its own conversation with two messages and a session.
type ParksStep struct {
	Parks       int     `json:"parks"`
	Filled      int     `json:"filled"` // written at this step
	FillSeconds float64 `json:"fillSeconds"`
	// StartSeconds is from starting kindserver to its first 200 on
	// /healthz (the store answers); RSS is the server's VmRSS then, and
	// once every resume of the step is done.
	StartSeconds float64 `json:"startSeconds"`
	RSSStarted   int64   `json:"rssStarted"`
	RSSResumed   int64   `json:"rssResumed"`
	// Resumes picked at random among the pending parks: a new socket
	// resumes the conversation (create_conversation_session →
	// interaction_required again), submits the card and reads the
	// eventual_response.
	Resumed     int     `json:"resumed"`
	Failed      int     `json:"failed"`
	CardP50Ms   float64 `json:"cardP50Ms"`
	CardP99Ms   float64 `json:"cardP99Ms"`
	ResumeP50Ms float64 `json:"resumeP50Ms"`
	ResumeP99Ms float64 `json:"resumeP99Ms"`
	// The sweep's store cost per tick: the median time of the due-parks
	// query (ExpiredParks with the engine's batch of 100), with none due
	// (now) and with every park due (two days on), and the rows it read.
	SweepNoneMs  float64 `json:"sweepNoneMs"`
	SweepNoneRow int     `json:"sweepNoneRows"`
	SweepAllMs   float64 `json:"sweepAllMs"`
	SweepAllRows int     `json:"sweepAllRows"`
	// The server's own mean expired_parks latency over a few ticks
	// after the resumes, from kindkit_store_operation_duration_seconds on
	// /metrics, and how many ticks that was.
	ServerSweepMs    float64 `json:"serverSweepMs"`
	ServerSweepTicks int     `json:"serverSweepTicks"`
	// StoreOpsMs is the server's mean latency of each store operation
	// the resumes made (from the same histogram).
	StoreOpsMs map[string]float64 `json:"storeOpsMs,omitempty"`
	// On PostgreSQL, the WAL bytes the cluster wrote during the resumes,
	// a resume (pg_current_wal_lsn). A page's first change after a
	// checkpoint writes the whole page, so resumes that touch cold pages
	// write more WAL for the same rows.
	WALBytesPerResume float64 `json:"walBytesPerResume,omitempty"`

	FailureSamples map[string]int `json:"errorSamples,omitempty"`
}

// sweepBatch is the engine's: the parks one tick asks for.
const sweepBatch = 100

// The server's histogram of its store operations' latency (the sweep's is
// expired_parks), and how many sweep ticks parks mode averages by default
// (the server ticks once a second).
const (
	storeMetric = "kindkit_store_operation_duration_seconds"
	sweepTicks  = 5
)

// parkIDs names the records of the k-th filled conversation.
type parkIDs struct{ conv, session, park, call, turn, msg1, msg2 string }

// fillIDs are the keys of the filled conversations' records, minted as a
// server mints them (store.NewID: time-ordered), or as kindkit minted them
// before (uuid.NewString: random) with -fill-ids v4, so that a store's
// indexes are shaped as a server would have left them. A resume names its
// conversation, session and park by the k-th entry: 48 bytes a park,
// 48 MB for a million.
type fillIDs struct {
	random bool // v4, not v7
	keys   [][3]uuid.UUID
}

// next mints the records' ids of the next conversation, k = len(f.keys).
func (f *fillIDs) next() parkIDs {
	id := store.NewID
	if f.random {
		id = uuid.NewString
	}
	k := len(f.keys)
	ids := parkIDs{conv: id(), session: id(), park: id(), call: "call-" + uuid.NewString(), turn: "fill-" + strconv.Itoa(k),
		msg1: id(), msg2: id()}
	f.keys = append(f.keys, [3]uuid.UUID{uuid.MustParse(ids.conv), uuid.MustParse(ids.session), uuid.MustParse(ids.park)})
	return ids
}

// of names the records of the k-th conversation filled, as far as a
// resume needs them.
func (f *fillIDs) of(k int) parkIDs {
	ks := f.keys[k]
	return parkIDs{conv: ks[0].String(), session: ks[1].String(), park: ks[2].String(), turn: "fill-" + strconv.Itoa(k)}
}

// parked is a new conversation as kindkit's demo model parks it on the
// first message of a session that supports choice_chips.
func parked(ids parkIDs, now time.Time) sqlstore.Parked {
	call := store.ToolCall{ID: ids.call, Name: "request_choices", Arguments: demoArgs}
	return sqlstore.Parked{
		Conversation: store.Conversation{ID: ids.conv, Supports: []string{"choice_chips"}, CreatedAt: now},
		Session: store.Session{ID: ids.session, ConversationID: ids.conv, AgentID: "kindload", AgentName: "kindkit", UserName: "kindload",
			UserParticipantID: ids.session + "-u", AgentParticipantID: ids.session + "-a"},
		Messages: []*store.Message{
			{ID: ids.msg1, ConversationID: ids.conv, Role: store.RoleUser, Text: "Hi, what does it cost?", CreatedAt: now},
			{ID: ids.msg2, ConversationID: ids.conv, Role: store.RoleAssistant, ToolCalls: []store.ToolCall{call}, CreatedAt: now},
		},
		Park: store.Park{ID: ids.park, Type: store.ParkInteraction, ConversationID: ids.conv, SessionID: ids.session, Kind: "choices",
			Spec: []byte(demoSpec), Reason: "to tailor the answer to you", ToolCall: call, Deadline: now.Add(24 * time.Hour),
			// The engine's state of the turn: of what it keeps, a parked
			// card's turn at its first raise has only its request id.
			State: store.ParkPending, Turn: []byte(`{"requestId":` + jsonString(ids.turn) + `}`)},
	}
}

// RunParks runs parks mode: for each step, fill the store directly up to
// that many pending parks, time the due-parks query, start kindserver on
// the store, time its start and read its RSS, resume cfg.Resumes
// conversations picked at random through it, read its sweep latency from
// /metrics, and stop it.
func RunParks(ctx context.Context, cfg Config, pc ParksConfig) (*ParksReport, error) {
	if len(pc.Steps) == 0 || pc.Store == "" || pc.Server == "" {
		return nil, errors.New("-parks needs -store DSN and -server PATH")
	}
	if pc.FillIDs != "" && pc.FillIDs != "v7" && pc.FillIDs != "v4" {
		return nil, fmt.Errorf("-fill-ids %q: want v7 or v4", pc.FillIDs)
	}
	if pc.Batch < 1 {
		pc.Batch = 10000
	}
	if cfg.DialConcurrency < 1 {
		cfg.DialConcurrency = 1
	}
	s, err := sqlstore.Open(ctx, pc.Store)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	fill := &fillIDs{random: pc.FillIDs == "v4"}
	dialect, _, _ := strings.Cut(pc.Store, ":")
	var wal *sql.DB // PostgreSQL's, for its WAL position
	if dialect == "postgres" || dialect == "postgresql" {
		cc, err := pgx.ParseConfig(pc.Store)
		if err != nil {
			return nil, err
		}
		wal = stdlib.OpenDB(*cc)
		defer wal.Close()
	}
	r := &ParksReport{Mode: "parks", Store: dialect}
	filled, resumed := 0, map[int]bool{}
	for _, n := range pc.Steps {
		st := ParksStep{Parks: n}
		start := time.Now()
		now := time.Now()
		for pending := filled - len(resumed); pending < n; {
			m := min(pc.Batch, n-pending)
			batch := make([]sqlstore.Parked, m)
			for i := range batch {
				batch[i] = parked(fill.next(), now)
			}
			if err := s.Load(ctx, batch); err != nil {
				return r, fmt.Errorf("fill: %w", err)
			}
			filled, pending, st.Filled = filled+m, pending+m, st.Filled+m
			if err := ctx.Err(); err != nil {
				return r, err
			}
		}
		st.FillSeconds = time.Since(start).Seconds()
		if wal != nil && st.Filled > 0 {
			// A fill writes in minutes what a server writes over days, and
			// leaves what the server's own upkeep would have done by then:
			// autovacuum's first pass over the new rows (their hint bits,
			// the visibility map, the planner's statistics) and the flush
			// of their dirty pages. Done now, neither runs in the middle of
			// the resumes. SQLite's Load checkpoints its own.
			for _, q := range []string{"VACUUM (ANALYZE)", "CHECKPOINT"} {
				if _, err := wal.ExecContext(ctx, q); err != nil {
					return r, fmt.Errorf("%s after the fill: %w", q, err)
				}
			}
		}
		st.SweepNoneMs, st.SweepNoneRow, err = timeDue(ctx, s, time.Now())
		if err != nil {
			return r, err
		}
		st.SweepAllMs, st.SweepAllRows, err = timeDue(ctx, s, time.Now().Add(48*time.Hour))
		if err != nil {
			return r, err
		}
		if err := parksStep(ctx, cfg, pc, fill, filled, resumed, wal, &st); err != nil {
			return r, err
		}
		r.Steps = append(r.Steps, st)
	}
	return r, nil
}

// timeDue is the median time of the due-parks query at now, over 21 runs,
// and the rows it returned.
func timeDue(ctx context.Context, s store.Store, now time.Time) (float64, int, error) {
	var d []time.Duration
	rows := 0
	for range 21 {
		start := time.Now()
		ps, err := s.ExpiredParks(ctx, now, sweepBatch)
		if err != nil {
			return 0, 0, err
		}
		d = append(d, time.Since(start))
		rows = len(ps)
	}
	return ms(distOf(d).P50), rows, nil
}

// parksStep starts kindserver on the filled store, resumes pc.Resumes of
// its parks (marking them in resumed) and stops it. wal, when not nil, is
// the PostgreSQL cluster whose WAL the resumes write.
func parksStep(ctx context.Context, cfg Config, pc ParksConfig, fill *fillIDs, filled int, resumed map[int]bool, wal *sql.DB, st *ParksStep) error {
	cmd := exec.Command(pc.Server, "-addr", cfg.Addr, "-store", pc.Store, "-client-frame-rate", "-1", "-conversation-rate", "-1")
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = io.Discard, &logs
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start kindserver: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() error {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			return err
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited // and its stderr is copied
			return errors.New("kindserver did not stop in 30s")
		}
	}
	if err := waitHealthy(ctx, cfg.Addr, exited); err != nil {
		stop()
		return fmt.Errorf("kindserver on the store: %w\n%s", err, lastLines(logs.String(), 5))
	}
	st.StartSeconds = time.Since(start).Seconds()
	rss, err := procRSS(cmd.Process.Pid)
	if err != nil {
		stop()
		return err
	}
	st.RSSStarted = rss

	// Pick the conversations to resume before timing any: uniformly among
	// the pending parks, so that a big store's are not in any cache.
	pending := filled - len(resumed)
	picks := make([]int, 0, min(pc.Resumes, pending))
	for len(picks) < cap(picks) {
		k := mrand.IntN(filled)
		if !resumed[k] {
			resumed[k] = true
			picks = append(picks, k)
		}
	}
	ops0, err := storeOps(ctx, cfg.Addr)
	if err != nil {
		stop()
		return err
	}
	wal0, err := walOf(ctx, wal)
	if err != nil {
		stop()
		return err
	}
	var t tally
	each(len(picks), cfg.DialConcurrency, func(i int) {
		ids := fill.of(picks[i])
		s := &session{id: "p" + strconv.Itoa(picks[i]), sessionID: ids.session, convID: ids.conv,
			chk: Checker{Turn: ids.turn, InteractionID: ids.park, Kind: "choices", acked: true, parked: true, called: true}}
		rctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
		t.finish(s.reconnect(rctx, cfg, &t), &s.chk)
	})
	st.Resumed, st.Failed, st.FailureSamples = t.ok, len(picks)-t.ok, t.errMsgs
	card, done := distOf(t.cards), distOf(t.done)
	st.CardP50Ms, st.CardP99Ms = ms(card.P50), ms(card.P99)
	st.ResumeP50Ms, st.ResumeP99Ms = ms(done.P50), ms(done.P99)
	if st.RSSResumed, err = procRSS(cmd.Process.Pid); err != nil {
		stop()
		return err
	}
	ops1, err := storeOps(ctx, cfg.Addr)
	if err != nil {
		stop()
		return err
	}
	wal1, err := walOf(ctx, wal)
	if err != nil {
		stop()
		return err
	}
	if wal != nil && t.ok > 0 {
		st.WALBytesPerResume = float64(wal1-wal0) / float64(t.ok)
	}
	for op, h := range ops1 {
		if m, n := meanMs(ops0[op], h); n > 0 && op != "expired_parks" && op != "owed_turns" && op != "renew_lease" {
			if st.StoreOpsMs == nil {
				st.StoreOpsMs = map[string]float64{}
			}
			st.StoreOpsMs[op] = m
		}
	}
	// The sweep's cost per tick, as the server times it: over ticks from
	// now on (the first ones paid for connecting and preparing).
	ticks := pc.Ticks
	if ticks < 1 {
		ticks = sweepTicks
	}
	last := ops1
	for wait := time.Now(); last["expired_parks"].n-ops1["expired_parks"].n < ticks && time.Since(wait) < time.Duration(3*ticks)*time.Second; {
		time.Sleep(200 * time.Millisecond)
		if last, err = storeOps(ctx, cfg.Addr); err != nil {
			stop()
			return err
		}
	}
	st.ServerSweepMs, st.ServerSweepTicks = meanMs(ops1["expired_parks"], last["expired_parks"])
	if err := stop(); err != nil {
		return fmt.Errorf("stop kindserver: %w\n%s", err, lastLines(logs.String(), 5))
	}
	return nil
}

// walOf is the WAL position of db's PostgreSQL cluster, in bytes: the
// difference of two is the WAL written between them, pg_stat_wal's counts
// lag by up to a backend's stats interval. 0 when db is nil.
func walOf(ctx context.Context, db *sql.DB) (int64, error) {
	var lsn int64
	if db == nil {
		return 0, nil
	}
	if err := db.QueryRowContext(ctx, "SELECT (pg_current_wal_lsn() - '0/0')::bigint").Scan(&lsn); err != nil {
		return 0, fmt.Errorf("WAL position: %w", err)
	}
	return lsn, nil
}

// waitHealthy polls http://addr/healthz until it answers 200.
func waitHealthy(ctx context.Context, addr string, exited <-chan error) error {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/healthz", nil)
		if err != nil {
			return err
		}
		if resp, err := statsClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-exited:
			return fmt.Errorf("exited: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// hist is one series of a histogram: the sum of its observations and
// their count.
type hist struct {
	sum float64
	n   int
}

// storeOps reads kindkit_store_operation_duration_seconds from
// http://addr/metrics, per operation.
func storeOps(ctx context.Context, addr string) (map[string]hist, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := statsClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	out := map[string]hist{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		// kindkit_store_operation_duration_seconds_sum{operation="take_park"} 0.0123
		series, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		name, labels, ok := strings.Cut(series, `{operation="`)
		if !ok {
			continue
		}
		op, _, _ := strings.Cut(labels, `"`)
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		h := out[op]
		switch name {
		case storeMetric + "_sum":
			h.sum = v
		case storeMetric + "_count":
			h.n = int(v)
		default:
			continue
		}
		out[op] = h
	}
	return out, sc.Err()
}

// meanMs is the mean of the observations between two reads of a
// histogram, in milliseconds, and how many there were.
func meanMs(before, after hist) (float64, int) {
	n := after.n - before.n
	if n <= 0 {
		return 0, 0
	}
	return (after.sum - before.sum) * 1000 / float64(n), n
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// Print writes the table.
func (r *ParksReport) Print(w io.Writer) {
	fmt.Fprintf(w, "parks mode on %s: each park in its own conversation (2 messages, 1 session); resumes picked at random\n", r.Store)
	fmt.Fprintf(w, "  %9s %7s %7s %8s %8s %9s %8s %8s %8s %8s %9s %9s %9s\n", "parks", "fill s", "start s", "RSS MiB", "+resumes", "resumed",
		"card p50", "p99", "resume50", "p99", "due0 ms", "due100 ms", "tick ms")
	for _, s := range r.Steps {
		fmt.Fprintf(w, "  %9d %7.1f %7.3f %8.1f %8.1f %9s %8.2f %8.2f %8.2f %8.2f %9.3f %9.3f %9.3f\n", s.Parks, s.FillSeconds, s.StartSeconds,
			float64(s.RSSStarted)/(1<<20), float64(s.RSSResumed)/(1<<20), fmt.Sprintf("%d/%d", s.Resumed, s.Resumed+s.Failed),
			s.CardP50Ms, s.CardP99Ms, s.ResumeP50Ms, s.ResumeP99Ms, s.SweepNoneMs, s.SweepAllMs, s.ServerSweepMs)
		if len(s.StoreOpsMs) > 0 {
			ops := make([]string, 0, len(s.StoreOpsMs))
			for op := range s.StoreOpsMs {
				ops = append(ops, op)
			}
			slices.Sort(ops)
			fmt.Fprintf(w, "  %9s  store ms:", "")
			for _, op := range ops {
				fmt.Fprintf(w, " %s %.2f", op, s.StoreOpsMs[op])
			}
			fmt.Fprintln(w)
		}
		if s.WALBytesPerResume > 0 {
			fmt.Fprintf(w, "  %9s  WAL a resume: %.1f kB (the cluster's)\n", "", s.WALBytesPerResume/1000)
		}
		printSamples(w, "failures", s.FailureSamples)
	}
}

// parseSteps reads -parks: ascending counts, comma-separated.
func parseSteps(v string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("-parks %q: want counts such as 1000,100000", v)
		}
		if len(out) > 0 && n < out[len(out)-1] {
			return nil, fmt.Errorf("-parks %q: counts must ascend", v)
		}
		out = append(out, n)
	}
	return out, nil
}
