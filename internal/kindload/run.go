package kindload

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"time"
)

const usage = `kindload measures a Rich Interactions server (kindkit's kindserver) under load.

  kindload [-addr HOST:PORT] [-c N] [-n TOTAL | -d DURATION] [-json]
      cycle mode: N users, each cycle on a fresh socket: create a session
      (supports choice_chips), send a message, wait for the card, submit it,
      wait for the answer, close.
  kindload -hold N [-addr HOST:PORT] [-json]
      park N sessions on N open sockets, measure the server's memory and
      goroutines per park, resume them all, close, measure what it kept.
  kindload -reconnect N [-addr HOST:PORT] [-dial-c N] [-json]
      park N sessions (kindkit only: parks that outlive their socket), drop
      every socket, then resume each conversation on a new socket: expect
      the same card again, submit it with the new session, read the rest of
      the turn.
  kindload -parks N,N… -store DSN -server PATH [-addr HOST:PORT] [-resumes N] [-dial-c N] [-fill-ids v7|v4] [-json]
      fill the store directly up to each N pending parks in turn (each in
      its own conversation, as the demo model parks them, keyed as kindkit
      keys them, or with random v4 ids as it did before), time the
      due-parks query, start kindserver on the store and time its start,
      read its RSS, resume -resumes parks picked at random on new sockets,
      read its sweep latency from /metrics, stop it.
  kindload -canned HOST:PORT
      serve the same frames with no logic (the floor) until SIGINT/SIGTERM.

The server should serve GET /debug/stats on -stats-addr for its pid, memory
and goroutines (kindserver serves it on its -debug-addr; the default, -addr,
suits the canned floor); CPU and RSS are read from /proc, so it must run on
this machine. Exit status: 0, or 1 when a session failed or broke the event
order, 2 for bad flags.

Flags:
`

// Run does what cmd/kindload does and returns its exit status.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kindload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	cfg := Config{}
	fs.StringVar(&cfg.Addr, "addr", "127.0.0.1:8787", "the server's `host:port`")
	fs.StringVar(&cfg.Path, "path", "/ws", "the WebSocket `path`")
	fs.IntVar(&cfg.Concurrency, "c", 1, "cycle mode: concurrent users")
	fs.IntVar(&cfg.Cycles, "n", 1000, "cycle mode: cycles in all (with -d: a bound, if given)")
	fs.DurationVar(&cfg.Duration, "d", 0, "cycle mode: start cycles for this long instead of -n")
	fs.IntVar(&cfg.Hold, "hold", 0, "hold mode: park `N` sessions, each on its own socket")
	fs.IntVar(&cfg.Reconnect, "reconnect", 0, "reconnect mode: park `N` sessions, drop their sockets, resume each on a new socket")
	fs.IntVar(&cfg.DialConcurrency, "dial-c", 50, "hold and reconnect modes: sessions parked (and resumed) at once")
	fs.DurationVar(&cfg.Settle, "settle", 5*time.Second, "hold mode: longest wait after closing for the server's goroutines to go back down")
	fs.DurationVar(&cfg.After, "after", 0, "hold mode: shortest wait after closing before measuring what the server kept (e.g. past kindserver's -memory-retention)")
	fs.DurationVar(&cfg.Timeout, "timeout", 10*time.Second, "bound on one cycle (hold and reconnect modes: on one park, and on one resume)")
	fs.BoolVar(&cfg.Tail, "tail", false, "after eventual_response, ping and check every event up to the pong (catches events after the terminal one; costs a round trip)")
	fs.IntVar(&cfg.PID, "pid", 0, "the server's process id (default: the pid /debug/stats reports)")
	fs.StringVar(&cfg.StatsAddr, "stats-addr", "", "the `host:port` serving GET /debug/stats, e.g. kindserver's -debug-addr (default: -addr)")
	parks := fs.String("parks", "", "parks mode: fill the store to each of these `COUNTS` of pending parks (e.g. 0,1000,100000) and measure kindserver on it")
	var pc ParksConfig
	fs.StringVar(&pc.Store, "store", "", "parks mode: the store to fill and serve, as a `DSN` (sqlite:PATH or postgres://…)")
	fs.StringVar(&pc.Server, "server", "", "parks mode: the kindserver binary to start on the store")
	fs.IntVar(&pc.Resumes, "resumes", 200, "parks mode: parks resumed at each step")
	fs.IntVar(&pc.Batch, "fill-batch", 10000, "parks mode: parks written in one transaction of the fill")
	fs.StringVar(&pc.FillIDs, "fill-ids", "v7", "parks mode: the ids of the filled rows, `v7` (time-ordered, as kindkit makes them) or v4 (random, as it made them before)")
	fs.IntVar(&pc.Ticks, "ticks", sweepTicks, "parks mode: the server's sweep ticks to average (it ticks once a second)")
	canned := fs.String("canned", "", "serve the canned floor on `host:port` until SIGINT/SIGTERM")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the summary")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kindload: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if cfg.Hold < 0 || cfg.Reconnect < 0 {
		fmt.Fprintln(stderr, "kindload: -hold and -reconnect take a positive count")
		return 2
	}
	if cfg.Hold > 0 && cfg.Reconnect > 0 {
		fmt.Fprintln(stderr, "kindload: -hold and -reconnect exclude each other")
		return 2
	}
	nSet := false
	fs.Visit(func(f *flag.Flag) { nSet = nSet || f.Name == "n" })
	if cfg.Duration > 0 && !nSet {
		cfg.Cycles = 0
	}
	if err := raiseNoFile(); err != nil {
		fmt.Fprintf(stderr, "kindload: raise the open-file limit: %v\n", err)
	}

	if *canned != "" {
		ln, err := net.Listen("tcp", *canned)
		if err != nil {
			fmt.Fprintf(stderr, "kindload: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "kindload canned floor listening on ws://%s/ws\n", ln.Addr())
		if err := NewCanned().Serve(ctx, ln); err != nil {
			fmt.Fprintf(stderr, "kindload: %v\n", err)
			return 1
		}
		return 0
	}

	var (
		report interface{ Print(io.Writer) }
		failed bool
		err    error
	)
	switch {
	case *parks != "":
		if pc.Steps, err = parseSteps(*parks); err != nil {
			fmt.Fprintf(stderr, "kindload: %v\n", err)
			return 2
		}
		var r *ParksReport
		r, err = RunParks(ctx, cfg, pc)
		if r != nil && err == nil {
			report = r
			for _, s := range r.Steps {
				failed = failed || s.Failed > 0
			}
		}
	case cfg.Reconnect > 0:
		var r *ReconnectReport
		r, err = RunReconnect(ctx, cfg)
		if r != nil {
			report, failed = r, r.Failed > 0 || r.OrderViolations > 0
		}
	case cfg.Hold > 0:
		var r *HoldReport
		r, err = RunHold(ctx, cfg)
		if r != nil {
			report, failed = r, r.Errors > 0 || r.OrderViolations > 0
		}
	default:
		var r *CycleReport
		r, err = RunCycles(ctx, cfg)
		if r != nil {
			report, failed = r, r.Errors > 0 || r.OrderViolations > 0
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "kindload: %v\n", err)
		return 2
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(report); err != nil {
			fmt.Fprintf(stderr, "kindload: %v\n", err)
			return 1
		}
	} else {
		report.Print(stdout)
	}
	if failed {
		return 1
	}
	return 0
}
