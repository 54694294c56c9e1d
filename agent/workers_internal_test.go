package agent

import (
	"testing"
	"time"
)

// A worker that finished a run takes the next one; all of them exit when
// the engine stops.
func TestWorkersKeepTheirGoroutine(t *testing.T) {
	stop := make(chan struct{})
	w := newWorkers(stop)
	done := make(chan struct{}, 1)
	w.run(func() { done <- struct{}{} })
	<-done
	select {
	case w.work <- func() { done <- struct{}{} }: // only an idle worker receives
	case <-time.After(10 * time.Second):
		t.Fatal("no worker waits for the next run")
	}
	<-done
	close(stop)
	w.wait()
}

// An idle worker exits by itself.
func TestWorkersIdleExit(t *testing.T) {
	w := newWorkers(make(chan struct{}))
	w.idle = time.Millisecond
	for range 3 {
		w.run(func() {})
	}
	w.wait() // returns once every worker has left on its own
}
