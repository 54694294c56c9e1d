package dsn

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
	"github.com/kindkit/kindkit/store/sqlstore"
)

// Options tune Open; nil means the defaults.
type Options struct {
	// MemoryRetention, for memory, forgets a conversation unused this
	// long and without a pending card; 0 keeps everything.
	MemoryRetention time.Duration
}

// Open opens the store that dsn names, and returns it with its closer. Its
// errors name the store with its passwords hidden (Redact).
func Open(ctx context.Context, dsn string, opts *Options) (store.Store, func() error, error) {
	if dsn == "memory" {
		if opts != nil && opts.MemoryRetention > 0 {
			s := memstore.NewWithRetention(opts.MemoryRetention)
			return s, func() error { s.Close(); return nil }, nil
		}
		return memstore.New(), func() error { return nil }, nil
	}
	if !strings.HasPrefix(dsn, "sqlite:") && !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return nil, nil, fmt.Errorf("store %q: want memory, sqlite:PATH or postgres://…", Redact(dsn))
	}
	s, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		return nil, nil, err
	}
	return s, s.Close, nil
}

// Redact hides the passwords of a store URL (its user info's and a
// password query parameter), for a log line or an error.
func Redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		if strings.Contains(dsn, "password") {
			return "(a store URL that does not parse)"
		}
		return dsn
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}
