package agent

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/kindkit/kindkit/knowledge"
)

const (
	citationsPerTurn = 3
	maxSnippetBytes  = 280
)

// Knowledge grounds turns in documents: the engine searches it with each
// user message, cites the best documents to the client, and gives the
// model their whole text. knowledge.Index is one, in memory. A failed
// search or read is logged, and the turn goes on without the documents.
type Knowledge interface {
	// Search returns up to limit documents for query, the best first.
	Search(ctx context.Context, query string, limit int) ([]knowledge.Hit, error)
	// Doc returns the document whose Source is source, when there is one.
	Doc(ctx context.Context, source string) (knowledge.Doc, bool, error)
}

// cite searches the knowledge with the person's message (PROTOCOL.md §7.4):
// the best documents become the turn's citations, kept in its state so a
// turn resumed from a park, in any process, still reports them.
func (e *Engine) cite(ctx context.Context, message string) []Citation {
	if e.cfg.Knowledge == nil {
		return nil
	}
	hits, err := e.cfg.Knowledge.Search(ctx, message, citationsPerTurn)
	if err != nil {
		e.log.Warn("search the knowledge; the turn goes on without it", "err", err)
		return nil
	}
	out := make([]Citation, len(hits))
	for i, h := range hits {
		out[i] = Citation{ID: h.Source, Title: h.Source, Snippet: snippet(h.Content), Score: float64(h.Score)}
		if strings.HasPrefix(h.Source, "http://") || strings.HasPrefix(h.Source, "https://") {
			out[i].URL = h.Source
		}
	}
	return out
}

// snippet is content cut to at most maxSnippetBytes bytes, never inside a
// UTF-8 sequence.
func snippet(content string) string {
	if len(content) <= maxSnippetBytes {
		return content
	}
	cut := maxSnippetBytes
	for cut > 0 && !utf8.RuneStart(content[cut]) {
		cut--
	}
	return content[:cut]
}

// documents are the whole documents behind a turn's citations, for the
// model; a citation whose document is gone (the server restarted with
// other knowledge) is left out.
func (e *Engine) documents(ctx context.Context, cs []Citation) []knowledge.Doc {
	if e.cfg.Knowledge == nil || len(cs) == 0 {
		return nil
	}
	var out []knowledge.Doc
	for _, c := range cs {
		d, ok, err := e.cfg.Knowledge.Doc(ctx, c.ID)
		if err != nil {
			e.log.Warn("read a cited document; the model goes on without it", "err", err)
		}
		if ok {
			out = append(out, d)
		}
	}
	return out
}
