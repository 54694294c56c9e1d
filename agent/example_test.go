package agent_test

import (
	"context"
	"fmt"

	"github.com/kindkit/kindkit/agent"
)

// A host tool is a typed Go function: its argument schema comes from the
// argument type, and the model's arguments are checked against it before
// the function runs.
func ExampleNewTool() {
	type slotArgs struct {
		Day string `json:"day" jsonschema:"the day, as Mon…Fri"`
	}
	slots, err := agent.NewTool("free_slots", "Lists the free demo slots of a day.",
		func(ctx context.Context, a slotArgs) (any, error) {
			return []string{a.Day + " 10:00", a.Day + " 14:30"}, nil
		})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(slots.Parameters))
	r, _ := slots.Run(context.Background(), []byte(`{"day":"Tue"}`))
	fmt.Println(r.Text)
	r, _ = slots.Run(context.Background(), []byte(`{"weekday":"Tue"}`))
	fmt.Println(r.IsError)
	// Output:
	// {"type":"object","properties":{"day":{"type":"string","description":"the day, as Mon…Fri"}},"required":["day"],"additionalProperties":false}
	// ["Tue 10:00","Tue 14:30"]
	// true
}
