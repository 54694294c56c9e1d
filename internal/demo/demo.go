package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/google/uuid"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/gen/choicesgen"
	"github.com/kindkit/kindkit/store"
)

// Model is the built-in model of kindserver with no flags: on a
// conversation's first message it raises a choices card, and it answers
// from the picks, so a newcomer sees the whole flow without a real model.
// It is a model like any other: the engine knows no kind of it.
type Model struct{}

const demoRaise = `{"questions":[` +
	`{"question":"Which plan are you curious about?","header":"Plan","options":[{"label":"Starter","description":"For one person"},{"label":"Team","description":"Up to 20 seats"},{"label":"Enterprise"}]},` +
	`{"question":"What should the answer cover?","header":"Topics","options":[{"label":"Pricing"},{"label":"Security"},{"label":"Integrations"}],"multiSelect":true}],` +
	`"reason":"to tailor the answer to you"}`

func (Model) Respond(ctx context.Context, req agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	if err := ctx.Err(); err != nil {
		return agent.ModelResponse{}, err
	}
	h := req.History
	if len(h) == 0 {
		return agent.ModelResponse{}, nil
	}
	last := h[len(h)-1]
	var text string
	switch {
	case last.Role == store.RoleTool && (last.ToolName == choicesgen.ToolName || last.ToolName == agent.SubmitToolName && !last.IsError):
		text = demoAnswer(last.Text)
	case last.Role == store.RoleUser && askedInWords(h[:len(h)-1]):
		// The conversational path: the picks are read from the words and
		// submitted as a card's would be.
		if call, ok := demoSubmit(last.Text); ok {
			return agent.ModelResponse{ToolCalls: []store.ToolCall{call}}, nil
		}
		text = "I did not catch that: which plan (Starter, Team or Enterprise), and which topics (Pricing, Security, Integrations)?"
	case last.Role == store.RoleUser && !hasAssistant(h[:len(h)-1]):
		return agent.ModelResponse{ToolCalls: []store.ToolCall{{ID: "call-" + uuid.NewString(), Name: choicesgen.ToolName, Arguments: demoRaise}}}, nil
	case last.Role == store.RoleUser:
		text = fmt.Sprintf("You said %q. I am kindkit's demo model: I only ask one card per conversation. Run kindserver with -script or a real model for more.", last.Text)
	default:
		text = "Done."
	}
	for _, piece := range strings.SplitAfter(text, " ") {
		onText(piece)
	}
	return agent.ModelResponse{Text: text}, nil
}

// askedInWords tells whether the demo's card went the conversational way
// and has no accepted answer yet.
func askedInWords(h []*store.Message) bool {
	for i := len(h) - 1; i >= 0; i-- {
		m := h[i]
		switch {
		case m.Role != store.RoleTool:
		case m.ToolName == agent.SubmitToolName:
			return m.IsError // refused: the question is still open
		case m.ToolName == choicesgen.ToolName:
			return strings.Contains(m.Text, `"mode":"conversational"`)
		}
	}
	return false
}

// demoSubmit reads the demo card's answers from words: the first plan and
// every topic named in them.
func demoSubmit(words string) (store.ToolCall, bool) {
	lower := strings.ToLower(words)
	named := func(labels ...string) []string {
		var out []string
		for _, l := range labels {
			if strings.Contains(lower, strings.ToLower(l)) {
				out = append(out, l)
			}
		}
		return out
	}
	plans, topics := named("Starter", "Team", "Enterprise"), named("Pricing", "Security", "Integrations")
	if len(plans) == 0 || len(topics) == 0 {
		return store.ToolCall{}, false
	}
	args, _ := json.Marshal(map[string]any{"kind": choicesgen.Name, "values": map[string]any{"answers": []map[string]any{
		{"header": "Plan", "options": plans[:1]}, {"header": "Topics", "options": topics}}}})
	return store.ToolCall{ID: "call-" + uuid.NewString(), Name: agent.SubmitToolName, Arguments: string(args)}, true
}

func hasAssistant(h []*store.Message) bool {
	for _, m := range h {
		if m.Role == store.RoleAssistant {
			return true
		}
	}
	return false
}

// asV1 reads the tool result as encoding/json would, with fewer
// allocations: kindserver's load (scripts/load.sh) runs this model, and
// its cost is counted as the server's.
var asV1 = jsonv1.DefaultOptionsV1()

// demoAnswer words the raise's tool result for the person.
func demoAnswer(result string) string {
	var p struct {
		Status       string `json:"status"`
		Mode         string `json:"mode"`
		Instructions string `json:"instructions"`
		Values       struct {
			Answers []struct {
				Header  string   `json:"header"`
				Options []string `json:"options"`
				Other   string   `json:"other"`
			} `json:"answers"`
		} `json:"values"`
	}
	if jsonv2.Unmarshal([]byte(result), &p, asV1) != nil {
		return "Something went wrong with the card."
	}
	switch {
	case p.Mode == "conversational":
		return "Your client cannot show cards, so let me ask in words: which plan are you curious about (Starter, Team or Enterprise), and what should the answer cover (Pricing, Security, Integrations)?"
	case p.Status == "declined":
		return "No problem, we can skip that. What else can I do for you?"
	case p.Status == "no_response":
		return "The card timed out; ask again whenever you like."
	}
	var parts []string
	for _, a := range p.Values.Answers {
		picks := append([]string(nil), a.Options...)
		if a.Other != "" {
			picks = append(picks, a.Other)
		}
		parts = append(parts, a.Header+": "+strings.Join(picks, ", "))
	}
	return "Thanks — you picked " + strings.Join(parts, "; ") + ". That is the whole flow: the card parked the turn, your submit was validated, and the turn resumed with the canonical payload."
}
