package servertest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/server"
	"github.com/kindkit/kindkit/store/memstore"
)

// Server is a running test server.
type Server struct {
	*server.Server
	URL string // http://127.0.0.1:port
}

// WS is the server's WebSocket URL.
func (s *Server) WS() string { return "ws" + strings.TrimPrefix(s.URL, "http") + "/ws" }

// Addr is the server's host:port.
func (s *Server) Addr() string { return strings.TrimPrefix(s.URL, "http://") }

// Start serves a server made from cfg at /ws and /healthz, and root (when
// not nil) at /, until the test ends. A nil Catalog is kinds.All() and a
// nil Store a fresh memory store.
func Start(t testing.TB, cfg server.Config, root http.Handler) *Server {
	t.Helper()
	if cfg.Catalog == nil {
		catalog, err := kinds.All()
		if err != nil {
			t.Fatal(err)
		}
		cfg.Catalog = catalog
	}
	if cfg.Store == nil {
		cfg.Store = memstore.New()
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = srv
	if root != nil {
		mux := http.NewServeMux()
		mux.Handle("/ws", srv)
		mux.Handle("/healthz", srv)
		mux.Handle("/readyz", srv)
		mux.Handle("/", root)
		h = mux
	}
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		hs.Close()
	})
	return &Server{Server: srv, URL: hs.URL}
}
