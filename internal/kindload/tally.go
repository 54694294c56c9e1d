package kindload

import (
	"errors"
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

// tally collects what many sessions saw; it is safe for concurrent use.
type tally struct {
	mu         sync.Mutex
	ok, errs   int
	violations int
	park, done []time.Duration
	errMsgs    map[string]int // a few kinds of error, with counts
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

func (t *tally) parked(lat time.Duration) {
	t.mu.Lock()
	t.park = append(t.park, lat)
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
		t.errMsgs = count(t.errMsgs, errorKey(err))
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
