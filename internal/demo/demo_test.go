package demo

import (
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/kindkit/kindkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// demoAnswer words each way a card can end, from the tool result as the
// engine writes it.
func TestDemoAnswer(t *testing.T) {
	submitted := kindkit.Submitted([]byte(`{"answers":[{"header":"Plan","options":["Team"]},{"header":"Topics","options":["Pricing","Security"],"other":"SSO"}]}`))
	for _, c := range []struct {
		result string
		want   string
	}{
		{submitted.JSON(), "you picked Plan: Team; Topics: Pricing, Security, SSO."},
		{kindkit.Declined().JSON(), "No problem, we can skip that."},
		{kindkit.NoResponse().JSON(), "The card timed out"},
		{`{"mode":"conversational","kind":"choices"}`, "let me ask in words"},
		{`{"Status":"declined"}`, "No problem"}, // encoding/json's case-insensitive keys
		{`{"status":`, "Something went wrong"},
	} {
		if got := demoAnswer(c.result); !strings.Contains(got, c.want) {
			t.Errorf("demoAnswer(%s) = %q, want it to say %q", c.result, got, c.want)
		}
	}
}
