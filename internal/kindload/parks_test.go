package kindload

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kindkit/kindkit/store/storetest"
)

// kindserverBinary builds cmd/kindserver for the test.
func kindserverBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kindserver")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/kindserver").CombinedOutput(); err != nil {
		t.Fatalf("build kindserver: %v\n%s", err, out)
	}
	return bin
}

// freeAddr is a loopback address nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestParksAgainstKindserver: the fill writes parks as kindserver's demo
// model parks them (a real kindserver resumes each it is asked to, card
// and reply), tops the store up at each step, and the due-parks query
// reads at most a batch.
func TestParksAgainstKindserver(t *testing.T) {
	bin := kindserverBinary(t)
	for name, dsn := range map[string]func(testing.TB) string{
		"sqlite":   func(t testing.TB) string { return "sqlite:" + filepath.Join(t.TempDir(), "parks.db") },
		"postgres": func(t testing.TB) string { return storetest.PostgresDB(t) },
	} {
		t.Run(name, func(t *testing.T) {
			var r ParksReport
			run(t, &r, "-parks", "0,30,150", "-resumes", "10", "-dial-c", "4", "-ticks", "1", "-fill-batch", "70",
				"-store", dsn(t), "-server", bin, "-addr", freeAddr(t))
			if len(r.Steps) != 3 {
				t.Fatalf("%d steps, want 3: %+v", len(r.Steps), r)
			}
			for i, want := range []struct{ filled, resumed, due int }{{0, 0, 0}, {30, 10, 30}, {130, 10, 100}} {
				s := r.Steps[i]
				if s.Filled != want.filled || s.Resumed != want.resumed || s.Failed != 0 || s.SweepAllRows != want.due || s.SweepNoneRow != 0 {
					t.Errorf("step %d: filled %d resumed %d failed %d (%v), due %d now %d; want %d %d 0, due %d now 0",
						i, s.Filled, s.Resumed, s.Failed, s.FailureSamples, s.SweepAllRows, s.SweepNoneRow, want.filled, want.resumed, want.due)
				}
				if s.StartSeconds <= 0 || s.RSSStarted <= 0 || s.RSSResumed <= 0 || s.ServerSweepTicks < 1 {
					t.Errorf("step %d: start %vs, RSS %d then %d, %d server ticks", i, s.StartSeconds, s.RSSStarted, s.RSSResumed, s.ServerSweepTicks)
				}
				if want.resumed > 0 && (s.CardP50Ms <= 0 || s.CardP99Ms < s.CardP50Ms || s.ResumeP50Ms <= 0 || s.ResumeP99Ms < s.ResumeP50Ms) {
					t.Errorf("step %d: latencies %+v", i, s)
				}
				if _, ok := s.StoreOpsMs["take_park"]; ok != (want.resumed > 0) {
					t.Errorf("step %d: store operations %v, with take_park: %v", i, s.StoreOpsMs, want.resumed > 0)
				}
				if wal := s.WALBytesPerResume > 0; wal != (name == "postgres" && want.resumed > 0) {
					t.Errorf("step %d: WAL a resume %.0f bytes; want some on postgres after resumes, else none", i, s.WALBytesPerResume)
				}
			}
		})
	}
}

func TestParksFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-parks", "10,5", "-store", "sqlite::memory:", "-server", os.DevNull},
		{"-parks", "x", "-store", "sqlite::memory:", "-server", os.DevNull},
		{"-parks", "10"},
	} {
		var stdout, stderr discard
		if code := Run(t.Context(), args, &stdout, &stderr); code != 2 {
			t.Errorf("kindload %q: exit %d, want 2", args, code)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
