package agent

import (
	"sync"
	"time"

	"github.com/kindkit/kindkit/internal/stack"
)

// workerIdle is how long a worker waits for the next run before it exits.
const workerIdle = 10 * time.Second

// workers runs turn runs on goroutines it keeps. A run is deep (the model
// client, the store's driver, a kind's schema validator) and grows its
// goroutine's stack to tens of KiB; growing a fresh goroutine's stack for
// every run was 4–5% of a cycle's CPU at c=50 (runtime.newstack in a CPU
// profile of kindserver under kindload). A kept worker has its stack
// grown already. A worker idle for workerIdle exits, and all of them do
// once the engine stops, so a closed engine holds no goroutine.
type workers struct {
	work chan func()   // unbuffered: a send succeeds only when a worker waits
	stop chan struct{} // the engine's
	idle time.Duration // workerIdle; shorter in tests
	wg   sync.WaitGroup
}

func newWorkers(stop chan struct{}) *workers {
	return &workers{work: make(chan func()), stop: stop, idle: workerIdle}
}

// run runs fn on an idle worker, or on a new one.
func (w *workers) run(fn func()) {
	select {
	case w.work <- fn:
	default:
		w.wg.Add(1)
		go w.loop(fn)
	}
}

func (w *workers) loop(fn func()) {
	defer w.wg.Done()
	idle := time.NewTimer(w.idle)
	defer idle.Stop()
	for {
		// A new worker's stack is small, and a GC shrinks an idle one: a
		// run's kind validator would grow it deep in its recursion.
		stack.Grow()
		fn()
		idle.Reset(w.idle)
		select {
		case fn = <-w.work:
		case <-idle.C:
			return
		case <-w.stop:
			return
		}
	}
}

// wait waits for the workers to exit, once stop is closed and no run
// starts any more.
func (w *workers) wait() { w.wg.Wait() }
