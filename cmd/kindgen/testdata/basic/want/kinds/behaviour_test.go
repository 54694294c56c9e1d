package kinds_test

import (
	"testing"

	"github.com/kindkit/kindkit/cmd/kindgen/testdata/basic/want/kinds"
)

// The generated poll kind, with no rules of its own, checks raises and values
// against its schema alone.
func TestPoll(t *testing.T) {
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	poll, ok := catalog.ByTool("request_poll")
	if !ok {
		t.Fatal("request_poll is not in the catalog")
	}
	raise, err := poll.ParseRaise([]byte(`{"prompt":"Lunch?","choices":[{"id":"a","text":"Pizza"},{"id":"b","text":"Soup"}],"reason":" to order "}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(raise.Spec.JSON), `{"prompt":"Lunch?","choices":[{"id":"a","text":"Pizza"},{"id":"b","text":"Soup"}]}`; got != want {
		t.Errorf("spec = %s, want %s", got, want)
	}
	if raise.Reason != "to order" {
		t.Errorf("reason = %q", raise.Reason)
	}
	if _, err := poll.ParseRaise([]byte(`{"prompt":"Lunch?","choices":[{"id":"a","text":"Pizza"}]}`)); err == nil {
		t.Error("a raise with one choice was accepted")
	}
	values, errs := poll.Validate(&raise.Spec, []byte(`{"choice":"a"}`))
	if len(errs) > 0 || string(values) != `{"choice":"a"}` {
		t.Errorf("Validate = %s, %v", values, errs)
	}
	if _, errs := poll.Validate(&raise.Spec, []byte(`{"choice":1}`)); len(errs) != 1 || errs[0].Field != "choice" {
		t.Errorf("Validate of a number = %v, want one error on choice", errs)
	}
}
