package servertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// KindserverBinary builds cmd/kindserver, found at dir (relative to the
// test's package), once per test process, for tests that run it as a
// real process and kill it.
func KindserverBinary(t testing.TB, dir string) string {
	t.Helper()
	buildOnce.Do(func() {
		tmp, err := os.MkdirTemp("", "kindserver-test")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(tmp, "kindserver")
		if out, err := exec.Command("go", "build", "-o", binary, dir).CombinedOutput(); err != nil {
			buildErr = &buildError{err, string(out)}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }
