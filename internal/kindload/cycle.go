package kindload

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config is what the flags say.
type Config struct {
	Addr            string        // server host:port
	Path            string        // WebSocket path
	Concurrency     int           // cycle mode: users at once
	Cycles          int           // cycle mode: cycles in all; 0 = no bound (with Duration)
	Duration        time.Duration // cycle mode: stop starting cycles after this; 0 = no bound
	Hold            int           // hold mode: parks to hold
	Reconnect       int           // reconnect mode: sessions to park, drop and resume
	DialConcurrency int           // hold and reconnect modes: sessions parked or resumed at once
	Settle          time.Duration // hold mode: longest wait for the server to let go
	After           time.Duration // hold mode: shortest wait before measuring what the server kept
	Timeout         time.Duration // bound on one cycle, or on one park or resume
	Tail            bool          // ping after eventual_response and check up to the pong
	PID             int           // server process; 0 = ask /debug/stats
	StatsAddr       string        // host:port serving /debug/stats; "" = Addr
}

func (c Config) url() string { return "ws://" + c.Addr + c.Path }

// statsAddr is where /debug/stats is read: kindserver serves it on its
// -debug-addr, the canned floor beside /ws.
func (c Config) statsAddr() string {
	if c.StatsAddr != "" {
		return c.StatsAddr
	}
	return c.Addr
}

// ms is a duration in milliseconds, rounded to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// CycleReport is what cycle mode measured. Its JSON is flat (but for the
// samples), so a shell script can pick fields out of it.
type CycleReport struct {
	Mode            string  `json:"mode"`
	Addr            string  `json:"addr"`
	Concurrency     int     `json:"concurrency"`
	Cycles          int     `json:"cycles"`
	OK              int     `json:"ok"`
	Errors          int     `json:"errors"`
	OrderViolations int     `json:"orderViolations"`
	Seconds         float64 `json:"seconds"`
	CyclesPerSec    float64 `json:"cyclesPerSec"`
	Latencies
	ServerPID int `json:"serverPid,omitempty"`
	// ServerCPUMsPerCycle is the server's utime+stime over the run, per
	// cycle; absent when its PID is unknown. /proc counts in 10 ms ticks.
	ServerCPUMsPerCycle *float64 `json:"serverCpuMsPerCycle,omitempty"`
	// ClientCPUMsPerCycle is kindload's own CPU time per cycle: the load
	// generator shares the machine with the server.
	ClientCPUMsPerCycle float64        `json:"clientCpuMsPerCycle"`
	ErrorSamples        map[string]int `json:"errorSamples,omitempty"`
	ViolationSamples    map[string]int `json:"violationSamples,omitempty"`
}

// serverPID is cfg.PID, or the pid /debug/stats reports, or 0.
func serverPID(ctx context.Context, cfg Config) int {
	if cfg.PID != 0 {
		return cfg.PID
	}
	st, err := fetchStats(ctx, cfg.statsAddr(), false)
	if err != nil {
		return 0
	}
	return st.PID
}

// RunCycles runs cycle mode.
func RunCycles(ctx context.Context, cfg Config) (*CycleReport, error) {
	if cfg.Concurrency < 1 {
		return nil, fmt.Errorf("-c must be at least 1")
	}
	if cfg.Cycles <= 0 && cfg.Duration <= 0 {
		return nil, fmt.Errorf("give -n or -d")
	}
	pid := serverPID(ctx, cfg)
	var cpu0 time.Duration
	if pid != 0 {
		c, err := procCPU(pid)
		if err != nil {
			return nil, fmt.Errorf("server pid %d: %w (is it on this machine?)", pid, err)
		}
		cpu0 = c
	}
	self0 := selfCPU()

	var t tally
	var next atomic.Int64
	start := time.Now()
	deadline := start.Add(cfg.Duration)
	var wg sync.WaitGroup
	for range cfg.Concurrency {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if cfg.Cycles > 0 && i >= cfg.Cycles {
					return
				}
				if cfg.Duration > 0 && time.Now().After(deadline) {
					return
				}
				cycle(ctx, cfg, &t, fmt.Sprintf("k%d", i))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)

	r := &CycleReport{Mode: "cycle", Addr: cfg.Addr, Concurrency: cfg.Concurrency,
		Cycles: t.ok + t.errs, OK: t.ok, Errors: t.errs, OrderViolations: t.violations,
		Seconds: elapsed.Seconds(), ServerPID: pid,
		ErrorSamples: t.errMsgs, ViolationSamples: t.violMsgs}
	r.CyclesPerSec = float64(t.ok) / elapsed.Seconds()
	r.Latencies = t.latencies()
	if r.Cycles > 0 {
		if pid != 0 {
			if cpu1, err := procCPU(pid); err == nil {
				v := ms(cpu1-cpu0) / float64(r.Cycles)
				r.ServerCPUMsPerCycle = &v
			}
		}
		r.ClientCPUMsPerCycle = ms(selfCPU()-self0) / float64(r.Cycles)
	}
	return r, nil
}

// cycle is one user's whole flow on a fresh socket.
func cycle(ctx context.Context, cfg Config, t *tally, id string) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	s, err := dial(ctx, cfg.url(), id)
	if err != nil {
		t.finish(err, nil)
		return
	}
	lat, err := s.start(ctx)
	if err == nil {
		t.parked(lat)
		lat, err = s.resume(ctx, cfg.Tail)
		if err == nil {
			t.resumed(lat)
		}
	}
	if err != nil {
		s.ws.CloseNow()
	} else {
		s.close()
	}
	t.finish(err, &s.chk)
}

// Print writes the human summary.
func (r *CycleReport) Print(w io.Writer) {
	fmt.Fprintf(w, "cycle mode against %s: c=%d, %d cycles in %.1fs: %.1f cycles/s\n",
		r.Addr, r.Concurrency, r.Cycles, r.Seconds, r.CyclesPerSec)
	fmt.Fprintf(w, "  errors %d, order violations %d\n", r.Errors, r.OrderViolations)
	r.Latencies.print(w)
	if r.ServerCPUMsPerCycle != nil {
		fmt.Fprintf(w, "  server CPU %.3f ms/cycle (pid %d, utime+stime)", *r.ServerCPUMsPerCycle, r.ServerPID)
	} else {
		fmt.Fprintf(w, "  server CPU unknown (no /debug/stats on -stats-addr and no -pid)")
	}
	fmt.Fprintf(w, "; kindload's own CPU %.3f ms/cycle\n", r.ClientCPUMsPerCycle)
	printSamples(w, "errors", r.ErrorSamples)
	printSamples(w, "order violations", r.ViolationSamples)
}

func printSamples(w io.Writer, what string, m map[string]int) {
	if len(m) == 0 {
		return
	}
	fmt.Fprintf(w, "  %s:\n", what)
	for _, k := range sortedCounts(m) {
		fmt.Fprintf(w, "    %6d× %s\n", m[k], strings.TrimSpace(k))
	}
}
