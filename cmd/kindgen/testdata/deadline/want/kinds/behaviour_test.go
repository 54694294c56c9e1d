package kinds_test

import (
	"testing"
	"time"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/cmd/kindgen/testdata/deadline/want/kinds"
)

// The poll kind's x-kind deadline is its descriptor's, and its default is
// an answer the kind accepts.
func TestPollDeadline(t *testing.T) {
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	poll, ok := catalog.Kind("poll")
	if !ok {
		t.Fatal("poll is not in the catalog")
	}
	d := poll.Descriptor().Deadline
	if d.After != 48*time.Hour || d.OnExpiry != kindkit.ExpireDefault || string(d.Default) != `{"choice":"undecided"}` || d.Check() != nil {
		t.Errorf("Deadline = %+v (%v)", d, d.Check())
	}
	raise, err := poll.ParseRaise([]byte(`{"prompt":"Lunch?","choices":[{"id":"a","text":"Pizza"},{"id":"b","text":"Soup"}],"reason":"to order"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, errs := poll.Validate(&raise.Spec, d.Default); len(errs) > 0 {
		t.Errorf("the default is refused: %v", errs)
	}
}
