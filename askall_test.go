package kindkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/kindkit/kindkit"
)

type pickSpec struct {
	Question string `json:"question"`
}

type pickValues struct {
	Pick string `json:"pick"`
}

// oneByOne is an Asker that is no MultiAsker: it answers each question by
// its spec's question, declining "no".
type oneByOne struct{ asked []string }

func (a *oneByOne) Ask(_ context.Context, kind string, spec json.RawMessage, _ string, _ kindkit.AskOptions) (json.RawMessage, error) {
	var s pickSpec
	_ = json.Unmarshal(spec, &s)
	a.asked = append(a.asked, kind+":"+s.Question)
	if s.Question == "no" {
		return nil, kindkit.ErrDeclined
	}
	return json.RawMessage(`{"pick":"` + s.Question + `!"}`), nil
}

// allAtOnce is a MultiAsker that parks the first time and answers every
// question the second.
type allAtOnce struct {
	oneByOne
	runs int
}

func (a *allAtOnce) AskAll(_ context.Context, qs []kindkit.AskRequest) ([]kindkit.AskResult, error) {
	a.runs++
	if a.runs == 1 {
		return nil, kindkit.ErrParked
	}
	out := make([]kindkit.AskResult, len(qs))
	for i, q := range qs {
		v, err := a.Ask(context.Background(), q.Kind, q.Spec, q.Reason, q.Options)
		out[i] = kindkit.AskResult{Values: v, Err: err}
	}
	return out, nil
}

func questions() (a, b *kindkit.Asking[pickSpec, pickValues]) {
	return &kindkit.Asking[pickSpec, pickValues]{Kind: "pick", Spec: &pickSpec{"yes"}, Reason: "r"},
		&kindkit.Asking[pickSpec, pickValues]{Kind: "pick", Spec: &pickSpec{"no"}, Reason: "r"}
}

// TestAskAll: AskAll fills each question's typed answer or error, through a
// MultiAsker (which may park first) or one Ask at a time.
func TestAskAll(t *testing.T) {
	yes, no := questions()
	if err := kindkit.AskAll(context.Background(), yes, no); err == nil {
		t.Error("AskAll without an asker = nil error")
	}
	one := &oneByOne{}
	ctx := kindkit.WithAsker(context.Background(), one)
	if err := kindkit.AskAll(ctx, yes, no); err != nil {
		t.Fatal(err)
	}
	if yes.Answer == nil || yes.Answer.Pick != "yes!" || yes.Err != nil || no.Answer != nil || !errors.Is(no.Err, kindkit.ErrDeclined) {
		t.Errorf("one by one: %+v %v, %+v %v", yes.Answer, yes.Err, no.Answer, no.Err)
	}
	all := &allAtOnce{}
	ctx = kindkit.WithAsker(context.Background(), all)
	yes, no = questions()
	if err := kindkit.AskAll(ctx, yes, no); !errors.Is(err, kindkit.ErrParked) || yes.Answer != nil {
		t.Fatalf("first run = %v, %+v; want ErrParked and no answer", err, yes.Answer)
	}
	if err := kindkit.AskAll(ctx, yes, no); err != nil || yes.Answer == nil || yes.Answer.Pick != "yes!" || !errors.Is(no.Err, kindkit.ErrDeclined) {
		t.Errorf("second run = %v: %+v, %v", err, yes.Answer, no.Err)
	}
	bad := &kindkit.Asking[pickSpec, pickValues]{Kind: "pick", Spec: &pickSpec{"x"},
		Options: []kindkit.AskOption{kindkit.WithDeadline(kindkit.Deadline{After: -1})}}
	if err := kindkit.AskAll(ctx, bad); err == nil {
		t.Error("AskAll with a bad deadline = nil error")
	}
}
