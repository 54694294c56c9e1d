package servertest

import (
	"context"
	"os"
	"testing"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/gen/choicesgen"
)

// BookDemo is a host tool, book_demo, that asks the person for a slot
// (Tue 10:00 or Wed 14:30) through the choices kind's Ask, and books it.
func BookDemo(t testing.TB) agent.HostTool {
	t.Helper()
	tool, err := agent.NewTool("book_demo", "Book a demo.", func(ctx context.Context, _ struct{}) (any, error) {
		slot, err := choicesgen.Ask(ctx, &choicesgen.Spec{Questions: []choicesgen.Question{{Question: "Which slot?", Header: "Slot",
			Options: []choicesgen.Option{{Label: "Tue 10:00"}, {Label: "Wed 14:30"}}}}}, "to book your demo")
		if err != nil {
			return nil, err
		}
		return "booked " + slot.Answers[0].Options[0], nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// EveryCardTurns are three turns of a scripted model whose cards are not a
// kind's raise: book_demo's Ask ("Booked."), then delete_record twice
// ("Deleted.", "Kept."), which a ConfirmTools entry "delete" asks the
// person to confirm. EveryCardTools are the host tools they call.
func EveryCardTurns() []agent.ScriptEntry {
	return []agent.ScriptEntry{
		{Kind: "toolCall", Name: "book_demo", Arguments: `{}`},
		{Kind: "text", Text: "Booked."},
		{Kind: "toolCall", Name: "delete_record", Arguments: `{"id":"42"}`},
		{Kind: "text", Text: "Deleted."},
		{Kind: "toolCall", Name: "delete_record", Arguments: `{"id":"43"}`},
		{Kind: "text", Text: "Kept."},
	}
}

// EveryCardTools are BookDemo and a delete_record that answers "deleted".
func EveryCardTools(t testing.TB) []agent.HostTool {
	t.Helper()
	return []agent.HostTool{BookDemo(t), agent.FixedTool(agent.Tool{Name: "delete_record", Parameters: []byte(`{"type":"object"}`)}, "deleted")}
}

// AGUIClient is the folder scripts/agui.sh installed @ag-ui/client and
// @ag-ui/core into (KINDKIT_TEST_AGUI). Without it the test is skipped,
// and under CI=true it fails.
func AGUIClient(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("KINDKIT_TEST_AGUI")
	if dir == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("KINDKIT_TEST_AGUI is not set in CI: install the AG-UI client with scripts/agui.sh")
		}
		t.Skip(`KINDKIT_TEST_AGUI not set; eval "$(scripts/agui.sh | tail -1)" to run the AG-UI client tests`)
	}
	return dir
}

// ApproveRefund is a host tool, approve_refund, that asks whoever to names
// (kindkit.AddressedTo: a principal, or group:NAME) which plan to quote,
// Basic or Pro, and answers "chose <plan>"; ApproveRefundModel is a
// scripted model that calls it once and replies "Pro it is.".
func ApproveRefund(t testing.TB, to string) agent.HostTool {
	t.Helper()
	tool, err := agent.NewTool("approve_refund", "Ask a manager to approve a refund.", func(ctx context.Context, _ struct{}) (any, error) {
		q := &choicesgen.Spec{Questions: []choicesgen.Question{{Question: "Which plan?", Header: "Plan",
			Options: []choicesgen.Option{{Label: "Basic"}, {Label: "Pro"}}}}}
		v, err := choicesgen.Ask(ctx, q, "to quote", kindkit.AddressedTo(to))
		if err != nil {
			return nil, err
		}
		return "chose " + v.Answers[0].Options[0], nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// ApproveRefundModel calls ApproveRefund's tool, then replies "Pro it is.".
func ApproveRefundModel(t testing.TB) agent.Model {
	t.Helper()
	model, err := agent.NewScripted([]agent.ScriptEntry{{Kind: "toolCall", Name: "approve_refund", Arguments: `{}`}, {Kind: "text", Text: "Pro it is."}})
	if err != nil {
		t.Fatal(err)
	}
	return model
}
