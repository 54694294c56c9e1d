package kindload

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Dist summarises latency samples.
type Dist struct {
	N             int
	P50, P99, Max time.Duration
}

func distOf(samples []time.Duration) Dist {
	if len(samples) == 0 {
		return Dist{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	return Dist{N: len(s), P50: rank(s, 0.50), P99: rank(s, 0.99), Max: s[len(s)-1]}
}

// rank is the nearest-rank percentile of sorted samples.
func rank(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

// Latencies are a run's two timed steps, in milliseconds: from writing
// send_message to reading interaction_required (park), and from writing
// submit_interaction to reading eventual_response (resume).
type Latencies struct {
	ParkP50Ms   float64 `json:"parkP50Ms"`
	ParkP99Ms   float64 `json:"parkP99Ms"`
	ParkMaxMs   float64 `json:"parkMaxMs"`
	ResumeP50Ms float64 `json:"resumeP50Ms"`
	ResumeP99Ms float64 `json:"resumeP99Ms"`
	ResumeMaxMs float64 `json:"resumeMaxMs"`
}

func (l Latencies) print(w io.Writer) {
	fmt.Fprintf(w, "  send_message → interaction_required    p50 %8.3f ms  p99 %8.3f ms  max %8.3f ms\n", l.ParkP50Ms, l.ParkP99Ms, l.ParkMaxMs)
	fmt.Fprintf(w, "  submit_interaction → eventual_response p50 %8.3f ms  p99 %8.3f ms  max %8.3f ms\n", l.ResumeP50Ms, l.ResumeP99Ms, l.ResumeMaxMs)
}

// tally collects what many sessions saw; it is safe for concurrent use.
type tally struct {
	mu         sync.Mutex
	ok, errs   int
	violations int
	park, done []time.Duration
	cards      []time.Duration   // reconnect mode: resume → interaction_required again
	errMsgs    map[string]int    // a few kinds of error, with counts
	examples   map[string]string // for an error kind whose error carries a frame, the first such frame
	violMsgs   map[string]int
}

const maxSamples = 20

func count(m map[string]int, msg string) map[string]int {
	if m == nil {
		m = map[string]int{}
	}
	if _, ok := m[msg]; !ok && len(m) >= maxSamples {
		msg = "(other)"
	}
	m[msg]++
	return m
}

// latencies summarises the park and resume samples.
func (t *tally) latencies() Latencies {
	t.mu.Lock()
	defer t.mu.Unlock()
	park, done := distOf(t.park), distOf(t.done)
	return Latencies{ms(park.P50), ms(park.P99), ms(park.Max), ms(done.P50), ms(done.P99), ms(done.Max)}
}

func (t *tally) parked(lat time.Duration) {
	t.mu.Lock()
	t.park = append(t.park, lat)
	t.mu.Unlock()
}

func (t *tally) carded(lat time.Duration) {
	t.mu.Lock()
	t.cards = append(t.cards, lat)
	t.mu.Unlock()
}

func (t *tally) resumed(lat time.Duration) {
	t.mu.Lock()
	t.done = append(t.done, lat)
	t.mu.Unlock()
}

// finish records one session's outcome: its error (nil when it went
// through) and the violations its checker saw.
func (t *tally) finish(err error, chk *Checker) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.errs++
		key := errorKey(err)
		t.errMsgs = count(t.errMsgs, key)
		var fe *frameError
		if errors.As(err, &fe) {
			if _, seen := t.examples[key]; !seen && len(t.examples) < maxSamples {
				if t.examples == nil {
					t.examples = map[string]string{}
				}
				t.examples[key] = fe.frame
			}
		}
	} else {
		t.ok++
	}
	if chk != nil {
		t.violations += len(chk.Violations)
		for _, v := range chk.Violations {
			t.violMsgs = count(t.violMsgs, v)
		}
	}
}

// frameError is an error caused by one frame: its message stays short (it
// is counted with alike errors) and the frame is kept as an example.
type frameError struct {
	err   error
	frame string
}

func (e *frameError) Error() string { return e.err.Error() }
func (e *frameError) Unwrap() error { return e.err }

// withFrame attaches ev's frame to err.
func withFrame(err error, ev *Event) error {
	if err == nil || ev == nil || len(ev.raw) == 0 {
		return err
	}
	return &frameError{err, ev.frame(600)}
}

// errorKey is an error's message with what varies from socket to socket
// (ports) cut, so that alike errors count together.
func errorKey(err error) string {
	var se *stageError
	if errors.As(err, &se) {
		msg := se.err.Error()
		if i := strings.Index(msg, "->"); i >= 0 {
			msg = msg[:i]
		}
		return se.stage + ": " + msg
	}
	return err.Error()
}

// sortedCounts lists m as "count× message", most frequent first.
func sortedCounts(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}
