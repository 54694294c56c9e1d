package agent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/store/memstore"
)

// Close, Drain and Shutdown may run at once: a signal while the server
// drains, or a test's cleanup while the Shutdown it started still runs.
// Each stops the loop; it is stopped once, and none panics (two saw the
// loop running and both closed its stop channel).
func TestStopsAtOnce(t *testing.T) {
	for range 300 {
		e := engine(t, memstore.New(), scripted(t), clockwork.NewFakeClock())
		start := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { <-start; e.Close() })
		wg.Go(func() { <-start; e.Drain(context.Background()) })
		wg.Go(func() { <-start; e.Shutdown(context.Background()) })
		close(start)
		wg.Wait()
	}
}
