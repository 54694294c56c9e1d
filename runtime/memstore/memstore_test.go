package memstore_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/runtime"
	"github.com/kindkit/kindkit/runtime/memstore"
	"github.com/kindkit/kindkit/runtime/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) runtime.Store { return memstore.New() })
}

func BenchmarkCycle(b *testing.B) { storetest.Bench(b, memstore.New()) }
