package servertest

import (
	"context"
	"testing"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/gen/choices"
)

// BookDemo is a host tool, book_demo, that asks the person for a slot
// (Tue 10:00 or Wed 14:30) through the choices kind's Ask, and books it.
func BookDemo(t testing.TB) agent.HostTool {
	t.Helper()
	tool, err := agent.NewTool("book_demo", "Book a demo.", func(ctx context.Context, _ struct{}) (any, error) {
		slot, err := choicesgen.Ask(ctx, &choicesgen.ChoicesSpec{Questions: []choicesgen.ChoicesQuestion{{Question: "Which slot?", Header: "Slot",
			Options: []choicesgen.ChoicesOption{{Label: "Tue 10:00"}, {Label: "Wed 14:30"}}}}}, "to book your demo")
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
