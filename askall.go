package kindkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// A Question is one question of AskAll: make it an *Asking, typed by its
// kind's spec and values.
type Question interface {
	request() (AskRequest, error)
	settle(r AskResult) error
}

// Asking is a question of AskAll, of a kind whose spec is S and whose
// answer's values are V (a kind's generated types). AskAll fills Answer,
// or Err when the question has no answer (ErrDeclined, ErrNoResponse).
type Asking[S, V any] struct {
	Kind    string
	Spec    *S
	Reason  string
	Options []AskOption

	Answer *V
	Err    error
}

func (q *Asking[S, V]) request() (AskRequest, error) {
	r := AskRequest{Kind: q.Kind, Reason: q.Reason}
	for _, opt := range q.Options {
		opt(&r.Options)
	}
	if r.Options.Deadline != nil {
		if err := r.Options.Deadline.Check(); err != nil {
			return r, fmt.Errorf("kindkit: ask %s: %w", q.Kind, err)
		}
	}
	raw, err := json.Marshal(q.Spec)
	if err != nil {
		return r, fmt.Errorf("kindkit: ask %s: %w", q.Kind, err)
	}
	r.Spec = raw
	return r, nil
}

func (q *Asking[S, V]) settle(r AskResult) error {
	q.Answer, q.Err = nil, r.Err
	if r.Err != nil {
		return nil
	}
	var v V
	if err := json.Unmarshal(r.Values, &v); err != nil {
		return fmt.Errorf("kindkit: ask %s: decode the answer: %w", q.Kind, err)
	}
	q.Answer = &v
	return nil
}

// AskRequest is one question of AskAll as an Asker gets it.
type AskRequest struct {
	Kind    string
	Spec    json.RawMessage
	Reason  string
	Options AskOptions
}

// AskResult is one question's answer: its canonical values, or Err
// (ErrDeclined, ErrNoResponse) when it has none.
type AskResult struct {
	Values json.RawMessage
	Err    error
}

// A MultiAsker is an Asker that asks several questions at once. It
// returns every question's result, in order, or ErrParked.
type MultiAsker interface {
	AskAll(ctx context.Context, qs []AskRequest) ([]AskResult, error)
}

// AskAll asks the person every question at once, through the Asker in
// ctx, and fills each one's Answer or Err. Where the conversation can show
// several cards at once (the engine's ParallelAsks), all of them open
// together and are answered in any order; elsewhere they are asked one at
// a time. It returns ErrParked, as Ask does, until every question is
// settled: the tool runs again from its start when they are, and this
// AskAll returns nil with the answers. An Asker that is no MultiAsker asks
// them one by one with Ask.
func AskAll(ctx context.Context, qs ...Question) error {
	reqs := make([]AskRequest, len(qs))
	for i, q := range qs {
		r, err := q.request()
		if err != nil {
			return err
		}
		reqs[i] = r
	}
	a, ok := ctx.Value(askerKey{}).(Asker)
	if !ok {
		return errors.New("kindkit: AskAll: no asker in the context (AskAll works inside a host tool)")
	}
	var results []AskResult
	if m, ok := a.(MultiAsker); ok {
		var err error
		if results, err = m.AskAll(ctx, reqs); err != nil {
			return err
		}
		if len(results) != len(reqs) {
			return fmt.Errorf("kindkit: AskAll: %d answers to %d questions", len(results), len(reqs))
		}
	} else {
		for _, r := range reqs {
			values, err := a.Ask(ctx, r.Kind, r.Spec, r.Reason, r.Options)
			if err != nil && !errors.Is(err, ErrDeclined) && !errors.Is(err, ErrNoResponse) {
				return err
			}
			results = append(results, AskResult{Values: values, Err: err})
		}
	}
	for i, q := range qs {
		if err := q.settle(results[i]); err != nil {
			return err
		}
	}
	return nil
}
