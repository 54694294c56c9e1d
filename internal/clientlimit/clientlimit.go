package clientlimit

import (
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limits are rate limits by client. Behind a reverse proxy every
// anonymous client has the proxy's address.
type Limits struct {
	limit rate.Limit
	burst int
	idle  time.Duration // unused this long, a bucket is full again: dropping it loses nothing

	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	*rate.Limiter
	used time.Time
}

// New is nil, allowing everything, when perSecond < 0.
func New(perSecond float64, burst int) *Limits {
	if perSecond < 0 {
		return nil
	}
	idle := time.Minute
	if perSecond > 0 {
		idle = max(idle, time.Duration(float64(burst)/perSecond*float64(time.Second)))
	}
	return &Limits{limit: rate.Limit(perSecond), burst: burst, idle: idle, buckets: map[string]*bucket{}}
}

// Allow takes one token of client's bucket.
func (l *Limits) Allow(client string, now time.Time) bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > l.idle {
		for k, b := range l.buckets {
			if now.Sub(b.used) > l.idle {
				delete(l.buckets, k)
			}
		}
		l.swept = now
	}
	b := l.buckets[client]
	if b == nil {
		b = &bucket{Limiter: rate.NewLimiter(l.limit, l.burst)}
		l.buckets[client] = b
	}
	b.used = now
	return b.AllowN(now, 1)
}

// RemoteIP is the address a request came from, without its port.
func RemoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
