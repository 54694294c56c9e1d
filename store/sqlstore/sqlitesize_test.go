package sqlstore

import (
	"context"
	"strings"
	"testing"
)

func TestSQLiteMemoryParams(t *testing.T) {
	def := sqliteMemory{cache: defaultCache, readCache: defaultReadCache, mmap: defaultMmap}
	for _, c := range []struct {
		path, file string
		want       sqliteMemory
	}{
		{"./k.db", "./k.db", def},
		{":memory:", ":memory:", def},
		{"./k.db?_pragma=busy_timeout(5000)", "./k.db?_pragma=busy_timeout(5000)", def},
		{"./k.db?cache=8MiB", "./k.db", sqliteMemory{8 << 20, defaultReadCache, defaultMmap}},
		{"./k.db?cache=1GiB&read_cache=512KiB&mmap=0", "./k.db", sqliteMemory{1 << 30, 512 << 10, 0}},
		{"./k.db?mmap=2047MiB", "./k.db", sqliteMemory{defaultCache, defaultReadCache, 2047 << 20}},
		{"./k.db?read_cache=4096", "./k.db", sqliteMemory{defaultCache, 4096, defaultMmap}},
		{"./k.db?mmap=4096B&_txlock=deferred", "./k.db?_txlock=deferred", sqliteMemory{defaultCache, defaultReadCache, 4096}},
		{"file:k.db?cache=shared", "file:k.db?cache=shared", def},
		{"file:k.db?cache=private&mmap=0", "file:k.db?cache=private", sqliteMemory{defaultCache, defaultReadCache, 0}},
	} {
		file, got, err := sqliteMemoryParams(c.path)
		if err != nil || file != c.file || got != c.want {
			t.Errorf("sqliteMemoryParams(%q) = %q, %+v, %v; want %q, %+v", c.path, file, got, err, c.file, c.want)
		}
	}
	for _, c := range []struct{ path, err string }{
		{"./k.db?cache=64MB", `bad cache "64MB": want a whole number of B, KiB, MiB, GiB or TiB`},
		{"./k.db?cache=64mib", `bad cache "64mib"`},
		{"./k.db?cache=", `bad cache ""`},
		{"./k.db?cache=MiB", `bad cache "MiB"`},
		{"./k.db?cache=-1MiB", `bad cache "-1MiB"`},
		{"./k.db?cache=%2B1MiB", `bad cache "+1MiB"`},
		{"./k.db?cache=1.5GiB", `bad cache "1.5GiB"`},
		{"./k.db?cache=0", `bad cache "0": want 1KiB to 1TiB`},
		{"./k.db?cache=100", `bad cache "100": want 1KiB to 1TiB`},
		{"./k.db?cache=2TiB", `bad cache "2TiB": want 1KiB to 1TiB`},
		{"./k.db?cache=99999999999999999999", `bad cache "99999999999999999999": too large`},
		{"./k.db?cache=9223372036854775807GiB", `too large`},
		{"./k.db?read_cache=0", `bad read_cache "0": want 1KiB to 1TiB`},
		{"./k.db?mmap=2GiB", `bad mmap "2GiB": want 0B to 2047MiB`},
		{"./k.db?mmap=1MiB&mmap=2MiB", `mmap given 2 times`},
		{"./k.db?cache=%zz", `bad query`},
	} {
		_, _, err := sqliteMemoryParams(c.path)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("sqliteMemoryParams(%q) = %v, want an error with %q", c.path, err, c.err)
		}
		if s, err := Open(context.Background(), "sqlite:"+c.path); err == nil {
			s.Close()
			t.Errorf("Open(sqlite:%s) succeeded", c.path)
		}
	}
}

func FuzzSQLiteMemoryParams(f *testing.F) {
	for _, s := range []string{"k.db", "k.db?cache=64MiB&mmap=0", "k.db?read_cache=1TiB&x=1", "k.db?mmap=%zz", "?cache=1B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		file, m, err := sqliteMemoryParams(path)
		if err != nil {
			return
		}
		if m.cache < 1<<10 || m.cache > maxCache || m.readCache < 1<<10 || m.readCache > maxCache || m.mmap < 0 || m.mmap > maxMmap {
			t.Errorf("sqliteMemoryParams(%q) = %+v: out of range", path, m)
		}
		if file != path {
			_, q, _ := strings.Cut(file, "?")
			for _, k := range []string{"cache=", "read_cache=", "mmap="} {
				if strings.HasPrefix(q, k) || strings.Contains(q, "&"+k) {
					t.Errorf("sqliteMemoryParams(%q) left %s in %q", path, k, file)
				}
			}
		}
	})
}

func TestParseSizeRoundTrip(t *testing.T) {
	for _, n := range []int64{0, 1, 1023, 1 << 10, 3 << 20, 2047 << 20, 1 << 40, 1<<40 + 1} {
		got, err := parseSize(formatSize(n))
		if err != nil || got != n {
			t.Errorf("parseSize(formatSize(%d) = %q) = %d, %v", n, formatSize(n), got, err)
		}
	}
}
