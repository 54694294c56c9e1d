package kindload

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/kindkit/kindkit/internal/debugstats"
)

// HoldReport is what hold mode measured. Its JSON is flat (but for the
// samples), so a shell script can pick fields out of it. Memory figures
// are bytes; "mem" is heapInuse+stackInuse after a forced GC.
type HoldReport struct {
	Mode            string `json:"mode"`
	Addr            string `json:"addr"`
	Hold            int    `json:"hold"`
	Parked          int    `json:"parked"`
	Resumed         int    `json:"resumed"`
	Errors          int    `json:"errors"`
	OrderViolations int    `json:"orderViolations"`
	ServerPID       int    `json:"serverPid"`

	ParkSeconds   float64 `json:"parkSeconds"`
	ResumeSeconds float64 `json:"resumeSeconds"`
	Latencies
	// Server CPU (utime+stime) spent parking and resuming, per park.
	ServerCPUMsPerPark   float64 `json:"serverCpuMsPerPark"`
	ServerCPUMsPerResume float64 `json:"serverCpuMsPerResume"`

	GoroutinesBefore int   `json:"goroutinesBefore"`
	GoroutinesParked int   `json:"goroutinesParked"`
	GoroutinesAfter  int   `json:"goroutinesAfter"`
	MemBefore        int64 `json:"memBefore"`
	MemParked        int64 `json:"memParked"`
	MemAfter         int64 `json:"memAfter"`
	RSSBefore        int64 `json:"rssBefore"`
	RSSParked        int64 `json:"rssParked"`
	RSSAfter         int64 `json:"rssAfter"`

	// Per parked interaction, while parked.
	BytesPerPark      float64 `json:"bytesPerPark"`
	RSSPerPark        float64 `json:"rssPerPark"`
	GoroutinesPerPark float64 `json:"goroutinesPerPark"`
	// What stayed once every session ended, in all and per park.
	ResidualBytes        int64   `json:"residualBytes"`
	ResidualRSS          int64   `json:"residualRss"`
	ResidualGoroutines   int     `json:"residualGoroutines"`
	ResidualBytesPerPark float64 `json:"residualBytesPerPark"`
	ResidualRSSPerPark   float64 `json:"residualRssPerPark"`
	SettleSeconds        float64 `json:"settleSeconds"`

	ErrorSamples     map[string]int `json:"errorSamples,omitempty"`
	ViolationSamples map[string]int `json:"violationSamples,omitempty"`
}

// snapshot is the server's state at one point: stats after a forced GC,
// RSS and CPU time.
type snapshot struct {
	st  debugstats.Stats
	rss int64
	cpu time.Duration
}

func (s snapshot) mem() int64 { return int64(s.st.HeapInuse + s.st.StackInuse) }

func takeSnapshot(ctx context.Context, cfg Config, pid int) (snapshot, error) {
	var s snapshot
	cpu, err := procCPU(pid)
	if err != nil {
		return s, fmt.Errorf("server pid %d: %w (is it on this machine?)", pid, err)
	}
	s.cpu = cpu
	if s.st, err = fetchStats(ctx, cfg.statsAddr(), true); err != nil {
		return s, err
	}
	if s.rss, err = procRSS(pid); err != nil {
		return s, err
	}
	return s, nil
}

// each runs f(i) for i in [0, n), at most conc at once.
func each(n, conc int, f func(i int)) {
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(conc, n) {
		wg.Go(func() {
			for i := range jobs {
				f(i)
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
}

// RunHold runs hold mode. It needs the server's /debug/stats.
func RunHold(ctx context.Context, cfg Config) (*HoldReport, error) {
	if cfg.Hold < 1 {
		return nil, fmt.Errorf("-hold must be at least 1")
	}
	if cfg.DialConcurrency < 1 {
		cfg.DialConcurrency = 1
	}
	st, err := fetchStats(ctx, cfg.statsAddr(), false)
	if err != nil {
		return nil, fmt.Errorf("hold mode needs the server's stats: %w", err)
	}
	pid := st.PID
	if cfg.PID != 0 {
		pid = cfg.PID
	}
	before, err := takeSnapshot(ctx, cfg, pid)
	if err != nil {
		return nil, err
	}

	// Park.
	var t tally
	sessions := make([]*session, cfg.Hold)
	start := time.Now()
	each(cfg.Hold, cfg.DialConcurrency, func(i int) {
		if ctx.Err() != nil {
			t.finish(ctx.Err(), nil)
			return
		}
		pctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
		s, err := dial(pctx, cfg.url(), fmt.Sprintf("h%d", i))
		if err != nil {
			t.finish(err, nil)
			return
		}
		lat, err := s.start(pctx)
		if err != nil {
			s.ws.CloseNow()
			t.finish(err, &s.chk)
			return
		}
		t.parked(lat)
		sessions[i] = s
	})
	parkTime := time.Since(start)
	parked := 0
	for _, s := range sessions {
		if s != nil {
			parked++
		}
	}
	held, err := takeSnapshot(ctx, cfg, pid)
	if err != nil {
		closeAll(sessions)
		return nil, err
	}

	// Resume, and close each socket once its turn is done.
	start = time.Now()
	each(len(sessions), cfg.DialConcurrency, func(i int) {
		s := sessions[i]
		if s == nil {
			return
		}
		rctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
		lat, err := s.resume(rctx, cfg.Tail)
		if err != nil {
			s.ws.CloseNow()
		} else {
			t.resumed(lat)
			s.close()
		}
		t.finish(err, &s.chk)
	})
	resumeTime := time.Since(start)
	cpuResumed, err := procCPU(pid)
	if err != nil {
		return nil, err
	}

	// Wait for the server to drop to its goroutine count before the first
	// socket, or for -settle; but at least -after (say, the server's
	// retention of finished conversations). The snapshot that ends the wait
	// is the one reported: a separate check and measurement disagreed when
	// a stats request's own connection came and went between them.
	start = time.Now()
	var after snapshot
	for {
		if time.Since(start) >= cfg.After {
			if after, err = takeSnapshot(ctx, cfg, pid); err != nil {
				return nil, err
			}
			if after.st.Goroutines <= before.st.Goroutines || time.Since(start) >= max(cfg.Settle, cfg.After) {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	settled := time.Since(start)

	r := &HoldReport{Mode: "hold", Addr: cfg.Addr, Hold: cfg.Hold, Parked: parked, Resumed: len(t.done),
		Errors: t.errs, OrderViolations: t.violations, ServerPID: pid,
		ParkSeconds: parkTime.Seconds(), ResumeSeconds: resumeTime.Seconds(),
		GoroutinesBefore: before.st.Goroutines, GoroutinesParked: held.st.Goroutines, GoroutinesAfter: after.st.Goroutines,
		MemBefore: before.mem(), MemParked: held.mem(), MemAfter: after.mem(),
		RSSBefore: before.rss, RSSParked: held.rss, RSSAfter: after.rss,
		ResidualBytes: after.mem() - before.mem(), ResidualRSS: after.rss - before.rss,
		ResidualGoroutines: after.st.Goroutines - before.st.Goroutines,
		SettleSeconds:      settled.Seconds(),
		ErrorSamples:       t.errMsgs, ViolationSamples: t.violMsgs}
	r.Latencies = t.latencies()
	if parked > 0 {
		n := float64(parked)
		r.BytesPerPark = float64(held.mem()-before.mem()) / n
		r.RSSPerPark = float64(held.rss-before.rss) / n
		r.GoroutinesPerPark = float64(held.st.Goroutines-before.st.Goroutines) / n
		r.ResidualBytesPerPark = float64(r.ResidualBytes) / n
		r.ResidualRSSPerPark = float64(r.ResidualRSS) / n
		// The parking snapshot's GC is the server's CPU too, but it is
		// small next to thousands of sessions.
		r.ServerCPUMsPerPark = ms(held.cpu-before.cpu) / n
		r.ServerCPUMsPerResume = ms(cpuResumed-held.cpu) / n
	}
	return r, nil
}

func closeAll(sessions []*session) {
	for _, s := range sessions {
		if s != nil {
			s.ws.CloseNow()
		}
	}
}

func kib(b float64) string { return fmt.Sprintf("%.1f KiB", b/1024) }
func mib(b int64) string   { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// Print writes the human summary.
func (r *HoldReport) Print(w io.Writer) {
	fmt.Fprintf(w, "hold mode against %s: %d of %d parked in %.1fs, %d resumed in %.1fs\n",
		r.Addr, r.Parked, r.Hold, r.ParkSeconds, r.Resumed, r.ResumeSeconds)
	fmt.Fprintf(w, "  errors %d, order violations %d\n", r.Errors, r.OrderViolations)
	r.Latencies.print(w)
	fmt.Fprintf(w, "  server (pid %d)        goroutines   heap+stack        RSS\n", r.ServerPID)
	fmt.Fprintf(w, "    before              %10d %12s %10s\n", r.GoroutinesBefore, mib(r.MemBefore), mib(r.RSSBefore))
	fmt.Fprintf(w, "    all parked          %10d %12s %10s\n", r.GoroutinesParked, mib(r.MemParked), mib(r.RSSParked))
	fmt.Fprintf(w, "    after (%.1fs settle) %9d %12s %10s\n", r.SettleSeconds, r.GoroutinesAfter, mib(r.MemAfter), mib(r.RSSAfter))
	fmt.Fprintf(w, "  per parked interaction: %s heap+stack, %s RSS, %.2f goroutines, server CPU %.3f ms to park, %.3f ms to resume\n",
		kib(r.BytesPerPark), kib(r.RSSPerPark), r.GoroutinesPerPark, r.ServerCPUMsPerPark, r.ServerCPUMsPerResume)
	fmt.Fprintf(w, "  kept after the sessions ended: %s heap+stack (%s per park), %s RSS (%s per park), %d goroutines\n",
		mib(r.ResidualBytes), kib(r.ResidualBytesPerPark), mib(r.ResidualRSS), kib(r.ResidualRSSPerPark), r.ResidualGoroutines)
	printSamples(w, "errors", r.ErrorSamples)
	printSamples(w, "order violations", r.ViolationSamples)
}
