package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// VoucherCode is the one code the Vouchers server accepts.
const VoucherCode = "KIND-2026"

// Vouchers is a go-sdk MCP server that speaks MCP 2026-07-28 (stateless
// streamable HTTP) and asks through its results (input_required), never
// by elicitation/create. Its tool redeem asks, in one round, for a
// voucher code ("code") and a name ("name"); a wrong code is asked again
// in a new round (the name rides along in the request state), up to
// three attempts; a declined question ends the call. The result says
// what was redeemed for whom.
//
// It counts what it was sent, so a test can tell a first call sent twice
// (which kindkit must never do once the call's questions were stored)
// from a retry sent twice (which a crash may cause, and the spec leaves
// to the server).
type Vouchers struct {
	URL string

	mu      sync.Mutex
	firsts  int            // calls without a request state
	retries map[string]int // retries, by the request state they echoed
	states  map[string]voucherState
}

type voucherState struct {
	Name    string `json:"name,omitempty"`
	Attempt int    `json:"attempt"`
}

// StartVouchers serves a Vouchers server until the test ends.
func StartVouchers(t testing.TB) *Vouchers {
	t.Helper()
	v := &Vouchers{retries: map[string]int{}, states: map[string]voucherState{}}
	srv := sdk.NewServer(&sdk.Implementation{Name: "vouchers", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "redeem", Description: "Redeems a voucher; asks the person for its code and their name."}, v.redeem)
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(hs.Close)
	v.URL = hs.URL
	return v
}

// Firsts is the number of first calls (without a request state) received.
func (v *Vouchers) Firsts() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.firsts
}

// Retries is the number of retries received, and of those how many echoed
// a request state that an earlier retry had echoed already.
func (v *Vouchers) Retries() (all, repeated int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, n := range v.retries {
		all += n
		repeated += n - 1
	}
	return all, repeated
}

var (
	codeSchema = json.RawMessage(`{"type":"object","required":["code"],"properties":{"code":{"type":"string","title":"Voucher code","minLength":1}}}`)
	nameSchema = json.RawMessage(`{"type":"object","required":["name"],"properties":{"name":{"type":"string","title":"Your name","minLength":1}}}`)
)

func (v *Vouchers) redeem(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
	p := req.Params
	v.mu.Lock()
	defer v.mu.Unlock()
	if p.RequestState == "" {
		v.firsts++
		return v.ask(voucherState{Attempt: 1}, "Which voucher code do you want to redeem?", true), nil, nil
	}
	// The state is the client's to echo: this server believes only the
	// states it issued (a real one would seal it instead).
	st, ok := v.states[p.RequestState]
	if !ok {
		return nil, nil, fmt.Errorf("unknown request state")
	}
	v.retries[p.RequestState]++
	if st.Name == "" {
		name, declined := answer(p.InputResponses, "name")
		if declined != "" {
			return text("Nothing redeemed: the name was " + declined + "."), nil, nil
		}
		if name == "" {
			return v.ask(st, "Which voucher code do you want to redeem?", true), nil, nil // asked again, as the spec says
		}
		st.Name = name
	}
	code, declined := answer(p.InputResponses, "code")
	switch {
	case declined != "":
		return text("Nothing redeemed: the code was " + declined + "."), nil, nil
	case code != VoucherCode && st.Attempt >= 3:
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "Three wrong codes: nothing redeemed."}}}, nil, nil
	case code != VoucherCode:
		st.Attempt++
		return v.ask(st, fmt.Sprintf("%q is not a valid voucher code. Which code do you want to redeem?", code), false), nil, nil
	}
	return text(fmt.Sprintf("Redeemed %s for %s.", code, st.Name)), nil, nil
}

// ask is an input-required result asking for the code (and the name), with
// a fresh request state for st.
func (v *Vouchers) ask(st voucherState, message string, name bool) *sdk.CallToolResult {
	state := "s" + strconv.Itoa(len(v.states)+1)
	v.states[state] = st
	reqs := sdk.InputRequestMap{"code": &sdk.ElicitParams{Mode: "form", Message: message, RequestedSchema: codeSchema}}
	if name {
		reqs["name"] = &sdk.ElicitParams{Mode: "form", Message: "Who is redeeming it?", RequestedSchema: nameSchema}
	}
	return &sdk.CallToolResult{InputRequests: reqs, RequestState: state}
}

// answer is the accepted answer's field of input response id, or why there
// is none ("declined", "cancelled").
func answer(responses sdk.InputResponseMap, id string) (value, declined string) {
	r, ok := responses[id].(*sdk.ElicitResult)
	switch {
	case !ok:
		return "", ""
	case r.Action == "decline":
		return "", "declined"
	case r.Action != "accept":
		return "", "cancelled"
	}
	s, _ := r.Content[id].(string)
	return s, ""
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}
