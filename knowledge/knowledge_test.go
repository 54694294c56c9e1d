package knowledge_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/knowledge"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newIndex(t *testing.T, docs ...knowledge.Doc) *knowledge.Index {
	t.Helper()
	x, err := knowledge.New(docs)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func sources(hits []knowledge.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Source)
	}
	return out
}

func scores(hits []knowledge.Hit) []int {
	var out []int
	for _, h := range hits {
		out = append(out, h.Score)
	}
	return out
}

func TestSearchRanksByDistinctSharedWords(t *testing.T) {
	x := newIndex(t,
		knowledge.Doc{Source: "shipping.md", Content: "We ship in two days. Shipping is free."},
		knowledge.Doc{Source: "returns.md", Content: "Returns: send items back within 30 days for a refund."},
		knowledge.Doc{Source: "privacy.md", Content: "We never sell your data."},
		knowledge.Doc{Source: "refunds.md", Content: "A refund reaches your card in 5 days; refund refund refund."},
	)
	for _, tc := range []struct {
		query  string
		want   []string
		scores []int
	}{
		// "refund" counts once however often a document says it; "days"
		// is shared by three, which keep their given order.
		{"How many DAYS until my refund, refund?", []string{"returns.md", "refunds.md", "shipping.md"}, []int{2, 2, 1}},
		{"sell data", []string{"privacy.md", "shipping.md", "returns.md"}, []int{2, 0, 0}},
		// Nothing shared: the first three, score 0, as the reference does.
		{"zzz", []string{"shipping.md", "returns.md", "privacy.md"}, []int{0, 0, 0}},
		{"", []string{"shipping.md", "returns.md", "privacy.md"}, []int{0, 0, 0}},
		// Words are runs of letters and digits in any script, any case.
		{"30-DAYS", []string{"returns.md", "shipping.md", "refunds.md"}, []int{2, 1, 1}},
	} {
		hits := search(x, tc.query, 3)
		if got := sources(hits); !slices.Equal(got, tc.want) || !slices.Equal(scores(hits), tc.scores) {
			t.Errorf("Search(%q) = %v %v, want %v %v", tc.query, got, scores(hits), tc.want, tc.scores)
		}
	}
	if hits := search(x, "refund", 10); len(hits) != 4 {
		t.Errorf("k beyond the index: %d hits", len(hits))
	}
	if hits := search(x, "refund", 0); len(hits) != 0 {
		t.Errorf("k = 0: %d hits", len(hits))
	}
	if hits := search(x, "refund", -1); len(hits) != 0 {
		t.Errorf("k < 0: %d hits", len(hits))
	}
	if hits := search(newIndex(t), "refund", 3); len(hits) != 0 {
		t.Errorf("empty index: %v", hits)
	}
	if d, ok := doc(x, "privacy.md"); !ok || d.Content != "We never sell your data." {
		t.Errorf("Doc(privacy.md) = %v, %v", d, ok)
	}
	if _, ok := doc(x, "nope.md"); ok {
		t.Error("Doc(nope.md) found")
	}
	if hits := search(newIndex(t, knowledge.Doc{Source: "ü.md", Content: "Über Größe ÄNDERN"}), "größe ändern", 1); hits[0].Score != 2 {
		t.Errorf("non-ASCII words: score %d, want 2", hits[0].Score)
	}
}

func TestNewRefusesBadDocuments(t *testing.T) {
	for name, docs := range map[string][]knowledge.Doc{
		"no source":    {{Source: " ", Content: "x"}},
		"two sources":  {{Source: "a.md", Content: "x"}, {Source: "a.md", Content: "y"}},
		"invalid utf8": {{Source: "a.md", Content: "\xff"}},
	} {
		if _, err := knowledge.New(docs); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestLoadDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("returns.md", "Returns within 30 days.")
	write("faq/shipping.TXT", "Shipping takes two days.")
	write("logo.png", "\x89PNG")
	x, err := knowledge.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := sources(search(x, "shipping", 5)); !slices.Equal(got, []string{"faq/shipping.TXT", "returns.md"}) {
		t.Errorf("sources = %v", got)
	}

	if _, err := knowledge.LoadDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no .md") {
		t.Errorf("empty dir: err = %v", err)
	}
	if _, err := knowledge.LoadDir(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing dir: no error")
	}
	write("bad.md", "\xff\xfe")
	if _, err := knowledge.LoadDir(dir); err == nil || !strings.Contains(err.Error(), "bad.md") {
		t.Errorf("invalid UTF-8 file: err = %v", err)
	}
}

// FuzzSearch: any documents and query are handled without a panic, and the
// hits are a ranking: at most k, scores descending, and no document scores
// above one that contains every word of the query.
func FuzzSearch(f *testing.F) {
	f.Add("Returns within 30 days", "refund 30 DAYS?", 3)
	f.Add("", "", 0)
	f.Add("ok", "\xffÄÖ ü", -1)
	f.Fuzz(func(t *testing.T, content, query string, k int) {
		x, err := knowledge.New([]knowledge.Doc{{Source: "a", Content: content}, {Source: "b", Content: strings.ToValidUTF8(query, " ")}})
		if err != nil {
			if utf8.ValidString(content) {
				t.Fatalf("valid documents refused: %v", err)
			}
			return
		}
		hits := search(x, query, k)
		if len(hits) != min(max(k, 0), 2) {
			t.Fatalf("%d hits for k=%d", len(hits), k)
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].Score > hits[i-1].Score {
				t.Fatalf("not ranked: %v", scores(hits))
			}
		}
		if len(hits) == 2 && hits[0].Source == "a" && hits[0].Score > hits[1].Score {
			t.Fatalf("a outranks the query's own words: %v", scores(hits))
		}
	})
}

// search and doc are the index's lookups, which never fail.
func search(x *knowledge.Index, query string, k int) []knowledge.Hit {
	hits, _ := x.Search(context.Background(), query, k)
	return hits
}

func doc(x *knowledge.Index, source string) (knowledge.Doc, bool) {
	d, ok, _ := x.Doc(context.Background(), source)
	return d, ok
}
