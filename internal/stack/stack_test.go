package stack_test

import (
	"fmt"
	"testing"

	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/internal/stack"
	"github.com/kindkit/kindkit/kinds"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// BenchmarkSubmitFreshGoroutine checks the demo card's answer on a new
// goroutine each time, as a connection's reader does for its submit, with
// and without Grow first.
func BenchmarkSubmitFreshGoroutine(b *testing.B) {
	catalog, err := kinds.All()
	if err != nil {
		b.Fatal(err)
	}
	k, ok := catalog.Kind("choices")
	if !ok {
		b.Fatal("no choices kind")
	}
	r, err := k.ParseRaise([]byte(`{"questions":[{"question":"Which plan?","header":"Plan","options":[{"label":"Starter"},{"label":"Team"}]},` +
		`{"question":"What should the answer cover?","header":"Topics","options":[{"label":"Pricing"},{"label":"Security"}],"multiSelect":true}]}`))
	if err != nil {
		b.Fatal(err)
	}
	spec := r.Spec
	values := []byte(`{"answers":[{"header":"Plan","options":["Team"]},{"header":"Topics","options":["Pricing","Security"]}]}`)
	for _, grow := range []bool{false, true} {
		name := "as-is"
		if grow {
			name = "grown"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			errs := make(chan error)
			for b.Loop() {
				go func() {
					if grow {
						stack.Grow()
					}
					_, ferrs := k.Validate(&spec, values)
					if len(ferrs) > 0 {
						errs <- fmt.Errorf("%v", ferrs)
						return
					}
					errs <- nil
				}()
				if err := <-errs; err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
