package elicit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/elicit"
	"github.com/kindkit/kindkit/gen/choicesgen"
	"github.com/kindkit/kindkit/gen/identityintakegen"
	"github.com/kindkit/kindkit/gen/ratinggen"
	"github.com/kindkit/kindkit/kinds"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// oldProtocol is the newest MCP version in which a server sends
// elicitation/create itself.
const oldProtocol = "2025-11-25"

// person is the client's side: it answers each elicitation with the next
// of its answers, and keeps what it was asked.
type person struct {
	mu      sync.Mutex
	answers []*mcp.ElicitResult
	asked   []*mcp.ElicitParams
}

func (p *person) handle(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, req.Params)
	if len(p.answers) == 0 {
		return nil, errors.New("the test has no answer left")
	}
	a := p.answers[0]
	p.answers = p.answers[1:]
	return a, nil
}

func (p *person) messages() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, a := range p.asked {
		out = append(out, a.Message)
	}
	return out
}

func accept(content map[string]any) *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: "accept", Content: content}
}

// connect runs a go-sdk server and client over in-memory transports, the
// client answering elicitations as p does (p nil: a client without the
// elicitation capability), and returns the server's session.
func connect(t *testing.T, p *person, version string) *mcp.ServerSession {
	t.Helper()
	ss, _ := connectServer(t, mcp.NewServer(&mcp.Implementation{Name: "kinds", Version: "v0.0.1"}, nil), p, version)
	return ss
}

// connectServer is connect to server, whose tools the client may call;
// both sessions close when the test ends.
func connectServer(t *testing.T, server *mcp.Server, p *person, version string) (*mcp.ServerSession, *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := &mcp.ClientOptions{}
	if p != nil {
		opts.ElicitationHandler = p.handle
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "person", Version: "v0.0.1"}, opts)
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return ss, cs
}

func kind(t *testing.T, name string) kindkit.Kind {
	t.Helper()
	c, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	k, ok := c.Kind(name)
	if !ok {
		t.Fatalf("no kind %s", name)
	}
	return k
}

func ptr[T any](v T) *T { return &v }

var (
	choicesSpec = &choicesgen.Spec{Questions: []choicesgen.Question{
		{Question: "Which plan?", Header: "Plan", Options: []choicesgen.Option{{Label: "Solo"}, {Label: "Team", Description: ptr("Up to 10 seats")}}},
		{Question: "What should the demo cover?", Header: "Topics", MultiSelect: true, Options: []choicesgen.Option{{Label: "Pricing"}, {Label: "Security"}, {Label: "SSO"}}},
	}}
	ratingSpec = &ratinggen.Spec{Question: "How useful was this answer?", AllowComment: ptr(true),
		Scale: ratinggen.Scale{Min: 1, Max: 5, MinLabel: ptr("Not at all"), MaxLabel: ptr("Very")}}
	identitySpec = &identityintakegen.Spec{Fields: []identityintakegen.Field{
		{Key: "email", Required: true}, {Key: "name", Required: false, Label: ptr("What should we call you?")},
	}}
)

// Good answers come back as the kind's typed, canonical values, for each
// of the three kinds.
func TestElicitTyped(t *testing.T) {
	ctx := context.Background()
	t.Run("choices", func(t *testing.T) {
		p := &person{answers: []*mcp.ElicitResult{accept(map[string]any{
			"Plan.options": "Team", "Topics.options": []any{"Pricing", "SSO"}, "Topics.other": " and audit logs ",
		})}}
		got, err := elicit.Elicit[choicesgen.Values](ctx, connect(t, p, oldProtocol), kind(t, "choices"), choicesSpec, "to book your demo", nil)
		if err != nil {
			t.Fatal(err)
		}
		want := &choicesgen.Values{Answers: []choicesgen.Answer{
			{Header: "Plan", Options: []string{"Team"}},
			{Header: "Topics", Options: []string{"Pricing", "SSO"}, Other: ptr("and audit logs")},
		}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("values (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"to book your demo"}, p.messages()); diff != "" {
			t.Errorf("messages (-want +got):\n%s", diff)
		}
	})
	t.Run("rating", func(t *testing.T) {
		p := &person{answers: []*mcp.ElicitResult{accept(map[string]any{"score": 4, "comment": "  clear  "})}}
		got, err := elicit.Elicit[ratinggen.Values](ctx, connect(t, p, oldProtocol), kind(t, "rating"), ratingSpec, "to improve our answers", nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&ratinggen.Values{Score: 4, Comment: ptr("clear")}, got); diff != "" {
			t.Errorf("values (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"How useful was this answer?\n\nto improve our answers"}, p.messages()); diff != "" {
			t.Errorf("messages (-want +got):\n%s", diff)
		}
	})
	t.Run("identity_intake", func(t *testing.T) {
		p := &person{answers: []*mcp.ElicitResult{accept(map[string]any{"email": "Ann@Example.COM", "name": " Ann "})}}
		got, err := elicit.Elicit[identityintakegen.Values](ctx, connect(t, p, oldProtocol), kind(t, "identity_intake"), identitySpec, "to send you the quote", nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&identityintakegen.Values{Email: ptr("Ann@example.com"), Name: ptr("Ann")}, got); diff != "" {
			t.Errorf("values (-want +got):\n%s", diff)
		}
	})
}

// An answer the kind's rules reject is asked again, the kind's errors in the
// message, and the next, good one is accepted.
func TestElicitAsksAgain(t *testing.T) {
	ctx := context.Background()
	t.Run("identity_intake email", func(t *testing.T) {
		p := &person{answers: []*mcp.ElicitResult{
			accept(map[string]any{"email": "ann@localhost"}),
			accept(map[string]any{"email": "ann@example.com"}),
		}}
		got, err := elicit.Elicit[identityintakegen.Values](ctx, connect(t, p, oldProtocol), kind(t, "identity_intake"), identitySpec, "to send you the quote", nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&identityintakegen.Values{Email: ptr("ann@example.com")}, got); diff != "" {
			t.Errorf("values (-want +got):\n%s", diff)
		}
		want := []string{"to send you the quote", "to send you the quote\n\nPlease check your answer: email: must be a valid email address."}
		if diff := cmp.Diff(want, p.messages()); diff != "" {
			t.Errorf("messages (-want +got):\n%s", diff)
		}
	})
	t.Run("choices two answers to a single-select question", func(t *testing.T) {
		p := &person{answers: []*mcp.ElicitResult{
			accept(map[string]any{"Plan.options": "Solo", "Plan.other": "or Team", "Topics.options": []any{"SSO"}}),
			accept(map[string]any{"Plan.options": "Solo", "Topics.options": []any{"SSO"}}),
		}}
		got, err := elicit.Elicit[choicesgen.Values](ctx, connect(t, p, oldProtocol), kind(t, "choices"), choicesSpec, "to book your demo", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.Answers[0].Options[0] != "Solo" || got.Answers[0].Other != nil {
			t.Errorf("values: %+v", got)
		}
		want := []string{"to book your demo", "to book your demo\n\nPlease check your answer: Plan: this question takes a single answer."}
		if diff := cmp.Diff(want, p.messages()); diff != "" {
			t.Errorf("messages (-want +got):\n%s", diff)
		}
	})
}

// Invalid answers are asked Attempts times in all, then the error says why.
func TestElicitAttempts(t *testing.T) {
	bad := accept(map[string]any{"email": "nope"})
	p := &person{answers: []*mcp.ElicitResult{bad, bad, bad}}
	_, err := elicit.Elicit[identityintakegen.Values](context.Background(), connect(t, p, oldProtocol), kind(t, "identity_intake"), identitySpec, "", &elicit.Options{Attempts: 2})
	var invalid *elicit.InvalidError
	if !errors.As(err, &invalid) || invalid.Attempts != 2 {
		t.Fatalf("error %v, want an InvalidError after 2 attempts", err)
	}
	if diff := cmp.Diff([]kindkit.FieldError{{Field: "email", Message: "must be a valid email address"}}, invalid.Errors); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if n := len(p.messages()); n != 2 {
		t.Errorf("asked %d times, want 2", n)
	}
}

func TestElicitDeclineCancel(t *testing.T) {
	for action, want := range map[string]error{"decline": kindkit.ErrDeclined, "cancel": kindkit.ErrNoResponse} {
		t.Run(action, func(t *testing.T) {
			p := &person{answers: []*mcp.ElicitResult{{Action: action}}}
			_, err := elicit.Elicit[ratinggen.Values](context.Background(), connect(t, p, oldProtocol), kind(t, "rating"), ratingSpec, "", nil)
			if !errors.Is(err, want) {
				t.Errorf("error %v, want %v", err, want)
			}
		})
	}
}

func TestElicitRefuses(t *testing.T) {
	ctx := context.Background()
	t.Run("no capability", func(t *testing.T) {
		_, err := elicit.Elicit[ratinggen.Values](ctx, connect(t, nil, oldProtocol), kind(t, "rating"), ratingSpec, "", nil)
		if !errors.Is(err, elicit.ErrNoElicitation) {
			t.Errorf("error %v, want ErrNoElicitation", err)
		}
	})
	t.Run("bad spec", func(t *testing.T) {
		p := &person{}
		bad := &ratinggen.Spec{Question: "Rate it", Scale: ratinggen.Scale{Min: 5, Max: 1}}
		_, err := elicit.Elicit[ratinggen.Values](ctx, connect(t, p, oldProtocol), kind(t, "rating"), bad, "", nil)
		var raise *kindkit.RaiseError
		if !errors.As(err, &raise) || !strings.Contains(err.Error(), "min (5) must be less than max (1)") {
			t.Errorf("error %v, want the rules' RaiseError", err)
		}
		if len(p.messages()) != 0 {
			t.Error("a bad spec was asked")
		}
	})
	t.Run("not elicitable", func(t *testing.T) {
		k, err := kindkit.NewKind[map[string]any, map[string]any](kindkit.Descriptor{
			Name: "note", Source: "note.schema.json", ToolName: "request_note",
			Schema:            `{"$defs": {"Spec": {"type": "object", "properties": {"text": {"type": "string"}}}, "Values": {"type": "object"}}}`,
			ElicitationSchema: `{"x-not-elicitable": "spec/interactions/note.schema.json: /$defs/Values: Values is not an object with properties"}`,
		}, kindkit.Unimplemented[map[string]any, map[string]any]{})
		if err != nil {
			t.Fatal(err)
		}
		p := &person{}
		_, err = elicit.Elicit[map[string]any](ctx, connect(t, p, oldProtocol), k, &map[string]any{"text": "hi"}, "", nil)
		if !errors.Is(err, elicit.ErrNotElicitable) || !strings.Contains(err.Error(), "/$defs/Values") {
			t.Errorf("error %v, want ErrNotElicitable with the reason", err)
		}
	})
}

// On MCP 2026-07-28 a server may not send elicitation/create: Elicit says
// so, and a tool handler asks the Question through its result's input
// requests instead, re-asking an invalid answer the same way.
func TestQuestionInputRequests(t *testing.T) {
	ctx := context.Background()
	p := &person{answers: []*mcp.ElicitResult{
		accept(map[string]any{"email": "ann@localhost"}),
		accept(map[string]any{"email": "ann@example.com"}),
	}}
	k := kind(t, "identity_intake")
	server := mcp.NewServer(&mcp.Implementation{Name: "kinds", Version: "v0.0.1"}, nil)
	var elicitErr error
	server.AddTool(&mcp.Tool{Name: "quote", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		_, elicitErr = elicit.Elicit[identityintakegen.Values](ctx, req.Session, k, identitySpec, "to send you the quote", nil)
		q, err := elicit.NewQuestion[identityintakegen.Values](k, identitySpec, "to send you the quote")
		if err != nil {
			return nil, err
		}
		var problems []kindkit.FieldError
		if res, ok := req.Params.InputResponses["email"].(*mcp.ElicitResult); ok {
			v, errs, err := q.Answer(res)
			if err != nil {
				return nil, err
			}
			if len(errs) == 0 {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "quote sent to " + *v.Email}}}, nil
			}
			problems = errs
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"email": q.Params(problems)}}, nil
	})
	_, cs := connectServer(t, server, p, "")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "quote"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "quote sent to ann@example.com" {
		t.Errorf("result %+v", res.Content)
	}
	if !errors.Is(elicitErr, elicit.ErrInputRequests) {
		t.Errorf("Elicit on a 2026-07-28 session: %v, want ErrInputRequests", elicitErr)
	}
	want := []string{"to send you the quote", "to send you the quote\n\nPlease check your answer: email: must be a valid email address."}
	if diff := cmp.Diff(want, p.messages()); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func kindsForFuzz() (kindkit.Kind, error) {
	c, err := kinds.All()
	if err != nil {
		return nil, err
	}
	k, _ := c.Kind("choices")
	return k, nil
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustRaise(t testing.TB, k kindkit.Kind, spec any) json.RawMessage {
	t.Helper()
	r, err := k.ParseRaise(mustJSON(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	return r.Spec.JSON
}

// Ask in a tool handler asks the way the session takes it: by
// elicitation/create on MCP 2025-11-25, by the result's input requests on
// 2026-07-28 (the handler runs again with the answer). Either way an invalid
// answer is asked again with the kind's errors, and two questions asked in
// turn both reach the handler.
func TestAskInTool(t *testing.T) {
	for version, wantRuns := range map[string]int{oldProtocol: 1, "2026-07-28": 4} {
		t.Run(version, func(t *testing.T) {
			ctx := context.Background()
			p := &person{answers: []*mcp.ElicitResult{
				accept(map[string]any{"email": "ann@localhost"}),
				accept(map[string]any{"email": "ann@example.com"}),
				accept(map[string]any{"score": 5}),
			}}
			idk, rk := kind(t, "identity_intake"), kind(t, "rating")
			server := mcp.NewServer(&mcp.Implementation{Name: "kinds", Version: "v0.0.1"}, nil)
			var runs int
			server.AddTool(&mcp.Tool{Name: "quote", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				runs++
				contact, ask, err := elicit.Ask[identityintakegen.Values](ctx, req, idk, identitySpec, "to send you the quote", nil)
				if ask != nil || err != nil {
					return ask, err
				}
				r, ask, err := elicit.Ask[ratinggen.Values](ctx, req, rk, &ratinggen.Spec{Question: "Rate us", Scale: ratinggen.Scale{Min: 1, Max: 5}}, "", nil)
				if ask != nil || err != nil {
					return ask, err
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s rated %d", *contact.Email, r.Score)}}}, nil
			})
			_, cs := connectServer(t, server, p, version)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "quote"})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "ann@example.com rated 5" {
				t.Errorf("result %+v", res.Content)
			}
			want := []string{"to send you the quote", "to send you the quote\n\nPlease check your answer: email: must be a valid email address.", "Rate us"}
			if diff := cmp.Diff(want, p.messages()); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			if runs != wantRuns {
				t.Errorf("the handler ran %d times, want %d", runs, wantRuns)
			}
		})
	}
}

// On 2026-07-28 too, invalid answers are asked Attempts times in all.
func TestAskAttempts(t *testing.T) {
	ctx := context.Background()
	bad := accept(map[string]any{"email": "nope"})
	p := &person{answers: []*mcp.ElicitResult{bad, bad, bad}}
	k := kind(t, "identity_intake")
	server := mcp.NewServer(&mcp.Implementation{Name: "kinds", Version: "v0.0.1"}, nil)
	var askErr error
	server.AddTool(&mcp.Tool{Name: "quote", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		_, ask, err := elicit.Ask[identityintakegen.Values](ctx, req, k, identitySpec, "", &elicit.Options{Attempts: 2})
		if err != nil {
			askErr = err
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
		}
		return ask, nil
	})
	_, cs := connectServer(t, server, p, "")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "quote"})
	if err != nil || !res.IsError {
		t.Fatalf("result %+v, %v; want the tool's error", res, err)
	}
	var invalid *elicit.InvalidError
	if !errors.As(askErr, &invalid) || invalid.Attempts != 2 {
		t.Errorf("error %v, want an InvalidError after 2 attempts", askErr)
	}
	if n := len(p.messages()); n != 2 {
		t.Errorf("asked %d times, want 2", n)
	}
}

// A client cannot answer for the person through the request state: a
// forged earlier answer, or the state of MCP 2026-07-28 as it was plain
// JSON before it was sealed, is refused, and the question asked afresh.
func TestAskRefusesForgedState(t *testing.T) {
	ctx := context.Background()
	p := &person{answers: []*mcp.ElicitResult{
		accept(map[string]any{"email": "ann@example.com"}),
		accept(map[string]any{"email": "ann@example.com"}),
	}}
	k := kind(t, "identity_intake")
	server := mcp.NewServer(&mcp.Implementation{Name: "kinds", Version: "v0.0.1"}, nil)
	server.AddTool(&mcp.Tool{Name: "quote", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		contact, ask, err := elicit.Ask[identityintakegen.Values](ctx, req, k, identitySpec, "", nil)
		if ask != nil || err != nil {
			return ask, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: *contact.Email}}}, nil
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "person", Version: "v0.0.1"}, &mcp.ClientOptions{ElicitationHandler: p.handle})
	forging := &forger{Transport: ct}
	cs, err := client.Connect(ctx, forging, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "quote"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; !forging.forged.Load() || got != "ann@example.com" {
		t.Errorf("the tool got %q (forged %v), want the person's own answer", got, forging.forged.Load())
	}
	if n := len(p.messages()); n != 2 {
		t.Errorf("the person was asked %d times, want 2: the forged answer is asked afresh", n)
	}
}

// forger is a client's transport that sends, instead of the first answer
// to an input request, a forged earlier answer in a plain request state.
type forger struct {
	mcp.Transport
	forged atomic.Bool
}

func (f *forger) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := f.Transport.Connect(ctx)
	return forgingConn{c, f}, err
}

type forgingConn struct {
	mcp.Connection
	f *forger
}

func (c forgingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/call" && bytes.Contains(req.Params, []byte(`"requestState"`)) &&
		c.f.forged.CompareAndSwap(false, true) {
		cp := *req
		cp.Params = json.RawMessage(`{"name":"quote","requestState":` +
			strconv.Quote(`{"answers":{"identity_intake":{"action":"accept","content":{"email":"mallory@example.com"}}}}`) + `}`)
		msg = &cp
	}
	return c.Connection.Write(ctx, msg)
}
