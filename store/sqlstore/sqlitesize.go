package sqlstore

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
)

// The memory a SQLite store keeps of its file, set in its DSN:
//
//	sqlite:./kindkit.db?cache=2000KiB&read_cache=2000KiB&mmap=0
//
// cache is the writer's page cache, read_cache each reader's (the cache is
// per connection: a store holds the writer, defaultReaders readers and a
// checkpointer, which keeps SQLite's 2 MB), and mmap how much of the file
// every connection reads through a memory map (shared by the connections:
// it is the file's pages in the operating system's cache, not a copy per
// connection). A cache is a bound, not an allocation: it fills as pages are
// read, so a small database uses little whatever the setting.
const (
	// Every connection keeps SQLite's own 2000 KiB by default. The
	// writer's was 64 MiB, to keep the pages its writes walk through, but
	// with the file in the OS cache a bigger cache costs more than the
	// reads it saves: at 1M parks, the writes of a resume took 1.1-1.8 ms
	// with 2000 KiB and 1.7-3.2 ms with 64 MiB (scripts/parks.sh with
	// SQLITE_QUERY, two pairs back to back on a quiet machine), and
	// BenchmarkResumeWrites spent about 20 % less CPU a resume at 100k.
	// A reader's cache is dropped whenever another connection committed
	// since its last read (modernc's pagerBeginReadTransaction), which on
	// a server that writes every cycle is every read. No map by default:
	// at 1M parks a 1 GiB cache and a 2047 MiB map made reads 2.7x and
	// writes 1.5-1.9x slower (the readers remap after every commit), and
	// a map costs RSS and turns an I/O error into a crash.
	defaultCache     = 2000 << 10 // the writer's
	defaultReadCache = 2000 << 10 // each reader's: SQLite's own
	defaultMmap      = 0
	maxMmap          = 2047 << 20 // SQLite's SQLITE_MAX_MMAP_SIZE in modernc's build is just under 2 GiB
	maxCache         = 1 << 40
)

// sqliteMemory is the cache and mmap of a SQLite store, in bytes.
type sqliteMemory struct {
	cache, readCache, mmap int64
}

// sqliteMemoryParams takes cache, read_cache and mmap out of a SQLite path's
// query, and returns the path without them (the rest is the driver's) and
// the settings, the defaults for those not given.
func sqliteMemoryParams(path string) (string, sqliteMemory, error) {
	m := sqliteMemory{cache: defaultCache, readCache: defaultReadCache, mmap: defaultMmap}
	file, query, ok := strings.Cut(path, "?")
	if !ok {
		return path, m, nil
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", m, fmt.Errorf("sqlstore: open sqlite: bad query %q: %w", query, err)
	}
	taken := false
	for _, p := range []struct {
		key      string
		to       *int64
		min, max int64
	}{
		{"cache", &m.cache, 1 << 10, maxCache},
		{"read_cache", &m.readCache, 1 << 10, maxCache},
		{"mmap", &m.mmap, 0, maxMmap},
	} {
		vs, ok := q[p.key]
		if !ok || p.key == "cache" && len(vs) == 1 && (vs[0] == "shared" || vs[0] == "private") {
			continue // SQLite's own cache=shared|private of a file: URI
		}
		if len(vs) != 1 {
			return "", m, fmt.Errorf("sqlstore: open sqlite: %s given %d times", p.key, len(vs))
		}
		n, err := parseSize(vs[0])
		if err == nil && (n < p.min || n > p.max) {
			err = fmt.Errorf("want %s to %s", formatSize(p.min), formatSize(p.max))
		}
		if err != nil {
			return "", m, fmt.Errorf("sqlstore: open sqlite: bad %s %q: %w", p.key, vs[0], err)
		}
		*p.to = n
		q.Del(p.key)
		taken = true
	}
	if !taken {
		return path, m, nil // the driver's own parameters, as given
	}
	if len(q) == 0 {
		return file, m, nil
	}
	return file + "?" + q.Encode(), m, nil
}

// pragmas are the driver parameters that give a connection a page cache of
// cache bytes and m's map.
func (m sqliteMemory) pragmas(cache int64) string {
	kib := (cache + 1023) >> 10
	return fmt.Sprintf("&_pragma=cache_size(-%d)&_pragma=mmap_size(%d)", kib, m.mmap)
}

// sizeUnits, largest first.
var sizeUnits = []struct {
	suffix string
	shift  uint
}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}

// parseSize reads a size in bytes: a whole number with an optional unit,
// B, KiB, MiB, GiB or TiB (64MiB, 1GiB, 0, 4096).
func parseSize(s string) (int64, error) {
	num, shift := s, uint(0)
	for _, u := range sizeUnits {
		if strings.HasSuffix(s, u.suffix) {
			num, shift = strings.TrimSuffix(s, u.suffix), u.shift
			break
		}
	}
	if num == "" || strings.Trim(num, "0123456789") != "" {
		return 0, errors.New("want a whole number of B, KiB, MiB, GiB or TiB, like 64MiB")
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > math.MaxInt64>>shift {
		return 0, errors.New("too large")
	}
	return n << shift, nil
}

// formatSize is n in the largest unit that divides it.
func formatSize(n int64) string {
	for _, u := range sizeUnits {
		if n%(1<<u.shift) == 0 && (n > 0 || u.shift == 0) {
			return fmt.Sprintf("%d%s", n>>u.shift, u.suffix)
		}
	}
	return "" // not reached: every n is a whole number of B
}
