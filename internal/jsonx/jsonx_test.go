package jsonx_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/kindkit/kindkit/internal/jsonx"
)

func TestDecode(t *testing.T) {
	for data, want := range map[string]any{
		` {"a":[1.50,1e999,"<&>"]} `: map[string]any{"a": []any{json.Number("1.50"), json.Number("1e999"), "<&>"}},
		`null`:                       nil,
		"7\n":                        json.Number("7"),
	} {
		var got any
		if err := jsonx.Decode([]byte(data), &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Decode(%q) = %#v, %v; want %#v", data, got, err, want)
		}
	}
	// After the value, a second value and a stray byte are both trailing
	// data: encoding/json's Token fails on the latter, which is no EOF.
	for _, data := range []string{`{} {}`, `{} }`, `1 x`, `[] ]`} {
		var v any
		if err := jsonx.Decode([]byte(data), &v); !errors.Is(err, jsonx.ErrTrailing) {
			t.Errorf("Decode(%q): %v, want ErrTrailing", data, err)
		}
	}
	var syn *json.SyntaxError
	if err := jsonx.Decode([]byte(`{"a":}`), new(any)); !errors.As(err, &syn) {
		t.Errorf("Decode of bad JSON: %v, want a *json.SyntaxError", err)
	}
	var s struct{ Name string }
	if err := jsonx.Decode([]byte(`{"Name":"x","nmae":"y"}`), &s); err == nil {
		t.Error("Decode accepted a member no field names")
	}
}

func TestMarshal(t *testing.T) {
	got, err := jsonx.Marshal(map[string]any{"b": "<a href=\"x\">&</a>", "a": json.Number("1.50")})
	if want := `{"a":1.50,"b":"<a href=\"x\">&</a>"}`; err != nil || string(got) != want {
		t.Errorf("Marshal = %s, %v; want %s", got, err, want)
	}
	if _, err := jsonx.Marshal(func() {}); err == nil {
		t.Error("Marshal of a func: no error")
	}
}
