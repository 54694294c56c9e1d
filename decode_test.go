package kindkit

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// stdDecode is what parse must match: encoding/json with exact numbers.
func stdDecode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() || dec.InputOffset() != int64(len(bytes.TrimRight(data, " \t\r\n"))) {
		return nil, errTrailing
	}
	return v, nil
}

var errTrailing = &json.SyntaxError{}

var parseSeeds = []string{
	`{"answers":[{"header":"Plan","options":["Pro"]},{"header":"Topics","options":["Sales","Billing"],"other":"Partnerships"}]}`,
	`{"a":1,"b":-0.5e+10,"c":[true,false,null],"d":"\u00e9\ud83d\ude00\n","e":{}}`,
	`"\xff\xfe"`, `"\ud800"`, `[1,]`, `{"a":1,}`, `01`, `-`, `1.`, `1e`, `.5`, `{"a" 1}`, `[`, `{}{}`, ` 7 `, `"a\tb"`,
	`{"k":"v","k":"w"}`, `{"a":1,"\u0061":2}`, `[{"k":1},{"k":2}]`, `{"k":{"k":1}}`, `nul`, `truex`, "\"\x01\"", `{"a":[{"b":[{"c":[]}]}]}`,
}

// FuzzParse: parse accepts exactly the single JSON values encoding/json
// accepts that repeat no key, and reads them to the same tree.
func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parse(data)
		valid := json.Valid(data) && !repeatsKey(data)
		if (err == nil) != valid {
			t.Fatalf("parse(%q) error %v, but valid without a repeated key = %v", data, err, valid)
		}
		if !valid {
			return
		}
		want, err := stdDecode(data)
		if err != nil {
			t.Fatalf("encoding/json rejects valid %q: %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("parse(%q) = %#v, encoding/json reads %#v", data, got, want)
		}
	})
}

// repeatsKey reports an object in valid JSON data that has a key twice,
// as encoding/json's tokenizer unescapes them.
func repeatsKey(data []byte) bool {
	type level struct {
		keys  map[string]bool // nil in an array
		value bool            // an object's next token is a value
	}
	var stack []level
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if n := len(stack); n > 0 && stack[n-1].keys != nil {
			top := &stack[n-1]
			if k, ok := tok.(string); ok && !top.value {
				if top.keys[k] {
					return true
				}
				top.keys[k], top.value = true, true
				continue
			}
			top.value = false
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, level{keys: map[string]bool{}})
		case json.Delim('['):
			stack = append(stack, level{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}

// A key twice in one object is refused, named, at any depth; the same key
// in sibling or nested objects, or in another case, is no repeat.
func TestParseRepeatedKey(t *testing.T) {
	for data, want := range map[string]string{
		`{"k":"v","k":"w"}`: `duplicate key "k" at offset 9`,
		`{"nested":{"header":"a"},"nested":{"score":1}}`: `duplicate key "nested" at offset 25`,
		`{"a":1,"\u0061":2}`:                             `duplicate key "a" at offset 7`,
		`[{"answers":[{"header":"x","header":"y"}]}]`:    `duplicate key "header" at offset 27`,
	} {
		if _, err := parse([]byte(data)); err == nil || err.Error() != want {
			t.Errorf("parse(%s): %v, want %s", data, err, want)
		}
	}
	for _, data := range []string{`[{"k":1},{"k":2}]`, `{"k":{"k":1}}`, `{"a":1,"A":2}`} {
		if _, err := parse([]byte(data)); err != nil {
			t.Errorf("parse(%s): %v", data, err)
		}
	}
}

type fillOption struct {
	Description *string `json:"description,omitempty"`
	Label       string  `json:"label"`
}

type fillStatus string

type fillTarget struct {
	Header   string                 `json:"header"`
	Options  []fillOption           `json:"options,omitempty"`
	Picks    []string               `json:"picks"`
	Multi    *bool                  `json:"multi"`
	Score    int                    `json:"score"`
	Small    int8                   `json:"small"`
	Ratio    float64                `json:"ratio"`
	Status   fillStatus             `json:"status"`
	Extra    map[string]interface{} `json:"extra"`
	Any      any                    `json:"any"`
	Nested   *fillTarget            `json:"nested"`
	Skipped  string                 `json:"-"`
	internal string
}

// FuzzFill: fill of a parsed tree gives what json.Unmarshal of the bytes
// gives, and fails where it fails. Keys that match a field only by case
// are left out: encoding/json matches them, fill (behind a schema that
// names every key exactly) does not.
func FuzzFill(f *testing.F) {
	for _, s := range []string{
		`{"header":"Plan","options":[{"label":"Pro","description":"x"}],"picks":["a"],"multi":true,"score":3,"ratio":0.5,"status":"ok"}`,
		`{"score":1.5}`, `{"score":"1"}`, `{"small":300}`, `{"score":1e2}`, `{"extra":{"a":[1,{"b":null}]},"any":[1,"x"]}`,
		`{"nested":{"nested":{"header":"deep"}}}`, `{"header":null,"multi":null,"options":null}`, `[]`, `"x"`, `null`,
		`{"-":"x","Skipped":"y","internal":"z"}`, `{"picks":[null,"a"]}`, `{"ratio":1e999}`,
		`{"nested":{"header":"a"},"nested":{"score":1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tree, err := parse(data)
		if err != nil || caseOnlyKey(tree) {
			return
		}
		var want, got fillTarget
		wantErr := json.Unmarshal(data, &want)
		gotErr := fill(&got, tree)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("%s: json.Unmarshal error %v, fill error %v", data, wantErr, gotErr)
		}
		if wantErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: fill = %+v, json.Unmarshal = %+v", data, got, want)
		}
	})
}

var fillNames = []string{"header", "options", "description", "label", "picks", "multi", "score", "small", "ratio", "status", "extra", "any", "nested"}

// caseOnlyKey reports a key, anywhere under a struct position, that equals
// a field name only when case is ignored (or names the skipped fields).
func caseOnlyKey(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			for _, n := range fillNames {
				if k != n && strings.EqualFold(k, n) {
					return true
				}
			}
			if strings.EqualFold(k, "skipped") || strings.EqualFold(k, "internal") || k == "-" {
				return true
			}
			if caseOnlyKey(e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if caseOnlyKey(e) {
				return true
			}
		}
	}
	return false
}
