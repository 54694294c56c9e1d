package knowledge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Doc is one document; Source is its id (a file name or a URL).
type Doc struct {
	Source  string `json:"source"`
	Content string `json:"content"`
}

// Hit is a document found by Search.
type Hit struct {
	Doc
	Score int // distinct words shared with the query
}

// Index is immutable once built and safe for concurrent use.
type Index struct {
	docs     []Doc
	words    []map[string]struct{} // per document
	bySource map[string]int
}

// New indexes docs. Sources must be non-empty and distinct: a citation
// names its document by source.
func New(docs []Doc) (*Index, error) {
	x := &Index{docs: slices.Clone(docs), words: make([]map[string]struct{}, len(docs)), bySource: make(map[string]int, len(docs))}
	for i, d := range docs {
		_, dup := x.bySource[d.Source]
		switch {
		case strings.TrimSpace(d.Source) == "":
			return nil, fmt.Errorf("knowledge: document %d has no source", i)
		case dup:
			return nil, fmt.Errorf("knowledge: two documents have the source %q", d.Source)
		case !utf8.ValidString(d.Content):
			return nil, fmt.Errorf("knowledge: %s: content is not valid UTF-8", d.Source)
		}
		x.bySource[d.Source] = i
		x.words[i] = words(d.Content)
	}
	return x, nil
}

// Extensions are the files LoadDir reads.
var Extensions = []string{".md", ".markdown", ".txt"}

// LoadDir indexes the text files under dir (see Extensions), each a
// document whose source is its path relative to dir, with forward
// slashes. Files are read in lexical order, which is also the order
// equal scores keep.
func LoadDir(dir string) (*Index, error) {
	var docs []Doc
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !slices.Contains(Extensions, strings.ToLower(filepath.Ext(path))) {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		docs = append(docs, Doc{Source: filepath.ToSlash(rel), Content: string(b)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("knowledge: %w", err)
	}
	if len(docs) == 0 {
		return nil, errors.New("knowledge: no " + strings.Join(Extensions, ", ") + " files under " + dir)
	}
	return New(docs)
}

// Len is the number of documents.
func (x *Index) Len() int { return len(x.docs) }

// Doc returns the document with the given source. It never fails: the
// index is in memory (the error is agent.Knowledge's).
func (x *Index) Doc(_ context.Context, source string) (Doc, bool, error) {
	i, ok := x.bySource[source]
	if !ok {
		return Doc{}, false, nil
	}
	return x.docs[i], true, nil
}

// Search returns the k best documents for query, best first. It never
// fails: the index is in memory (the error is agent.Knowledge's).
func (x *Index) Search(_ context.Context, query string, k int) ([]Hit, error) {
	q := words(query)
	hits := make([]Hit, len(x.docs))
	for i, d := range x.docs {
		hits[i] = Hit{Doc: d}
		for w := range q {
			if _, ok := x.words[i][w]; ok {
				hits[i].Score++
			}
		}
	}
	slices.SortStableFunc(hits, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	return hits[:min(max(k, 0), len(hits))], nil
}

// words are the distinct lower-cased runs of letters and digits of s.
func words(s string) map[string]struct{} {
	out := map[string]struct{}{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }) {
		out[strings.ToLower(w)] = struct{}{}
	}
	return out
}
