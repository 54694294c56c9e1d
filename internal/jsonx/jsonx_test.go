package jsonx_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
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

// An ordered document keeps its keys in order through a decode and an
// indented encode, follows pointers, and refuses duplicate keys and
// trailing data.
func TestOrdered(t *testing.T) {
	v, err := jsonx.DecodeOrdered([]byte(`{"z":1,"a":{"b/c":["<&>",2.50]},"m":null}`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonx.Indent(v)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"z\": 1,\n  \"a\": {\n    \"b/c\": [\n      \"<&>\",\n      2.50\n    ]\n  },\n  \"m\": null\n}\n"
	if string(out) != want {
		t.Errorf("Indent = %s, want %s", out, want)
	}
	if got, ok := jsonx.Pointer(v, "/a/b~1c/1"); !ok || got != json.Number("2.50") {
		t.Errorf("Pointer = %v, %v", got, ok)
	}
	if _, ok := jsonx.Pointer(v, "/a/x"); ok {
		t.Error("Pointer found a key that is not there")
	}
	o := v.(*jsonx.Object)
	o.Delete("z")
	o.Set("n", "x")
	if got := strings.Join(o.Keys(), ","); got != "a,m,n" {
		t.Errorf("keys after Delete and Set: %s", got)
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{} {}`} {
		if _, err := jsonx.DecodeOrdered([]byte(bad)); err == nil {
			t.Errorf("%s was read", bad)
		}
	}
}
