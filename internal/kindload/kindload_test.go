package kindload

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/internal/debugstats"
	"github.com/kindkit/kindkit/internal/wstest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startCanned serves the canned floor in-process on a loopback port until
// the test ends, and returns its address.
func startCanned(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveCanned(t, ln)
	return ln.Addr().String()
}

// serveCanned serves the canned floor on ln until the test ends.
func serveCanned(t testing.TB, ln net.Listener) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- NewCanned().Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("canned server: %v", err)
		}
	})
}

// The floor sends each batch of frames in one socket write, as kindkit
// does: a cycle is the handshake's response, the create reply, the park's
// three frames, the submit's 33 and the close frame. Written a frame at a
// time it took 39 writes. (kindload also reads /debug/stats once.)
func TestCannedWritesABatchAtOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counted := &wstest.CountingListener{Listener: ln}
	serveCanned(t, counted)
	const cycles = 5
	var r CycleReport
	run(t, &r, "-addr", ln.Addr().String(), "-c", "1", "-n", strconv.Itoa(cycles))
	if r.OK != cycles {
		t.Fatalf("%d cycles went through, want %d: %+v", r.OK, cycles, r)
	}
	if n := counted.Writes.Load(); n > 5*cycles+2 {
		t.Errorf("the floor made %d socket writes in %d cycles, want at most 5 a cycle and the stats reply", n, cycles)
	}
}

// run runs kindload with args and decodes its -json output into report.
func run(t *testing.T, report any, args ...string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), append(args, "-json"), &stdout, &stderr)
	if err := json.Unmarshal(stdout.Bytes(), report); err != nil {
		t.Fatalf("kindload %q: exit %d, %v; stdout %s stderr %s", args, code, err, stdout.String(), stderr.String())
	}
	if code != 0 {
		t.Errorf("kindload %q: exit %d; stdout %s stderr %s", args, code, stdout.String(), stderr.String())
	}
}

func TestCyclesAgainstCanned(t *testing.T) {
	addr := startCanned(t)
	var r CycleReport
	run(t, &r, "-addr", addr, "-c", "4", "-n", "40", "-tail")
	if r.Cycles != 40 || r.OK != 40 || r.Errors != 0 || r.OrderViolations != 0 {
		t.Errorf("cycles %d ok %d errors %d violations %d, want 40 40 0 0 (errors %v, violations %v)",
			r.Cycles, r.OK, r.Errors, r.OrderViolations, r.ErrorSamples, r.ViolationSamples)
	}
	if r.ParkP50Ms <= 0 || r.ParkP99Ms < r.ParkP50Ms || r.ResumeP50Ms <= 0 || r.ResumeMaxMs < r.ResumeP99Ms {
		t.Errorf("latencies %+v", r)
	}
	if r.ServerCPUMsPerCycle == nil || r.ServerPID == 0 {
		t.Errorf("no server CPU: %+v", r)
	}
	if r.CyclesPerSec <= 0 {
		t.Errorf("cycles/s %v", r.CyclesPerSec)
	}
}

func TestCyclesForADuration(t *testing.T) {
	addr := startCanned(t)
	var r CycleReport
	run(t, &r, "-addr", addr, "-c", "2", "-d", "200ms")
	if r.Cycles == 0 || r.Errors != 0 || r.OrderViolations != 0 {
		t.Errorf("cycles %d errors %d violations %d", r.Cycles, r.Errors, r.OrderViolations)
	}
	if r.Seconds < 0.2 || r.Seconds > 5 {
		t.Errorf("ran %.2fs for -d 200ms", r.Seconds)
	}
}

func TestHoldAgainstCanned(t *testing.T) {
	addr := startCanned(t)
	var r HoldReport
	run(t, &r, "-addr", addr, "-hold", "20", "-dial-c", "8", "-settle", "3s")
	if r.Parked != 20 || r.Resumed != 20 || r.Errors != 0 || r.OrderViolations != 0 {
		t.Errorf("parked %d resumed %d errors %d violations %d, want 20 20 0 0 (errors %v, violations %v)",
			r.Parked, r.Resumed, r.Errors, r.OrderViolations, r.ErrorSamples, r.ViolationSamples)
	}
	// The canned server holds a socket with its reader and its writer;
	// kindload holds its end with no goroutine.
	if r.GoroutinesPerPark < 2 || r.GoroutinesPerPark >= 3 {
		t.Errorf("%.2f goroutines per park, want 2", r.GoroutinesPerPark)
	}
	if r.BytesPerPark <= 0 {
		t.Errorf("%.0f bytes per park", r.BytesPerPark)
	}
	if r.ResidualGoroutines > 0 {
		t.Errorf("%d goroutines left after the sessions ended", r.ResidualGoroutines)
	}
}

// -stats-addr is where /debug/stats is read, as from kindserver's
// -debug-addr; a server that serves none there leaves its CPU unknown.
func TestStatsAddr(t *testing.T) {
	addr := startCanned(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/stats", debugstats.Handler)
	for _, c := range []struct {
		stats http.Handler
		known bool
	}{{mux, true}, {http.NotFoundHandler(), false}} {
		hs := httptest.NewServer(c.stats)
		var r CycleReport
		run(t, &r, "-addr", addr, "-stats-addr", strings.TrimPrefix(hs.URL, "http://"), "-n", "2")
		hs.Close()
		if r.OK != 2 || (r.ServerPID != 0) != c.known || (r.ServerCPUMsPerCycle != nil) != c.known {
			t.Errorf("stats served %v: ok %d, pid %d, CPU %v", c.known, r.OK, r.ServerPID, r.ServerCPUMsPerCycle)
		}
	}
}

// TestCannedFlag runs -canned as the command does, and stops it as
// SIGINT would.
func TestCannedFlag(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := Run(ctx, []string{"-canned", "127.0.0.1:0"}, pw, io.Discard)
		pw.Close()
		done <- code
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line[strings.Index(line, "ws://"):]), "ws://"), "/ws")
	var r CycleReport
	run(t, &r, "-addr", addr, "-n", "3")
	if r.OK != 3 {
		t.Errorf("%d of 3 cycles went through: %v", r.OK, r.ErrorSamples)
	}
	cancel()
	go io.Copy(io.Discard, pr)
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("-canned did not stop")
	}
}

func TestErrorsAreCounted(t *testing.T) {
	// A listener that is closed at once: every dial fails.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r, err := RunCycles(context.Background(), Config{Addr: addr, Path: "/ws", Concurrency: 2, Cycles: 4, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors != 4 || r.OK != 0 || len(r.ErrorSamples) != 1 {
		t.Errorf("errors %d ok %d samples %v", r.Errors, r.OK, r.ErrorSamples)
	}
	if r.ServerCPUMsPerCycle != nil {
		t.Error("server CPU with no server")
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-nope"}, {"extra"}, {"-c", "0"}} {
		if code := Run(context.Background(), args, io.Discard, io.Discard); code != 2 {
			t.Errorf("kindload %q: exit %d, want 2", args, code)
		}
	}
}
