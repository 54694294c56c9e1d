package dsn_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/dsn"
	"github.com/kindkit/kindkit/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Open takes the names kindserver's -store takes, each store usable, and
// refuses others without showing a password.
func TestOpen(t *testing.T) {
	ctx := context.Background()
	names := []string{"memory", "sqlite:" + filepath.Join(t.TempDir(), "kindkit.db")}
	if os.Getenv("KINDKIT_TEST_POSTGRES") != "" || os.Getenv("CI") == "true" {
		names = append(names, storetest.PostgresDB(t))
	}
	for _, name := range names {
		s, closeStore, err := dsn.Open(ctx, name, &dsn.Options{MemoryRetention: 0})
		if err != nil {
			t.Fatalf("%s: %v", dsn.Redact(name), err)
		}
		if err := s.CreateConversation(ctx, &store.Conversation{ID: "c1"}); err != nil {
			t.Errorf("%s: %v", dsn.Redact(name), err)
		}
		if _, err := s.Conversation(ctx, "c1"); err != nil {
			t.Errorf("%s: %v", dsn.Redact(name), err)
		}
		if err := closeStore(); err != nil {
			t.Errorf("%s: close: %v", dsn.Redact(name), err)
		}
	}
	for _, bad := range []string{"mysql://root:hunter2@db/kindkit", "./kindkit.db", ""} {
		_, _, err := dsn.Open(ctx, bad, nil)
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Open(%q) = %v: want an error without the password", dsn.Redact(bad), err)
		}
	}
	if got := dsn.Redact("postgres://kk:hunter2@db/kindkit?password=hunter2"); strings.Contains(got, "hunter2") {
		t.Errorf("Redact left the password in %q", got)
	}
}
