package kindkit

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/kindkit/kindkit/internal/jsonx"
)

var decodeSeeds = []string{
	`{"answers":[{"header":"Plan","options":["Pro"]},{"header":"Topics","options":["Sales","Billing"],"other":"Partnerships"}]}`,
	`{"a":1,"b":-0.5e+10,"c":[true,false,null],"d":"\u00e9\ud83d\ude00\n","e":{}}`,
	`"\xff\xfe"`, `"\ud800"`, `"\udc00\ud800"`, `"\ud83d\u0041"`, "\"\xff\"", `[1,]`, `{"a":1,}`, `01`, `-`, `1.`, `1e`, `.5`, `{"a" 1}`, `[`, `{}{}`, `{} }`, ` 7 `, `"a\tb"`,
	`{"k":"v","k":"w"}`, `{"a":1,"\u0061":2}`, `{"\u0061":1,"b\n":2}`, `[{"k":1},{"k":2}]`, `{"k":{"k":1}}`, `nul`, `truex`, "\"\x01\"", `{"a":[{"b":[{"c":[]}]}]}`, `1e999`, `1e400`, `1e-401`, `1E+0400`, `123456789012345678901234567890`, `[1e9999999999999999999999]`,
}

// FuzzDecode: decodeAny accepts exactly the single JSON values encoding/json
// accepts that repeat no key, hold valid UTF-8 (no invalid bytes, no lone
// surrogate escape, both of which encoding/json replaces with U+FFFD) and
// no number out of range, and reads them to the same tree; its errors are
// short.
func FuzzDecode(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeAny(data, fuzzNames)
		valid := json.Valid(data) && !repeatsKey(data) && utf8.Valid(data) && !loneSurrogate(data) && !outOfRange(data)
		if (err == nil) != valid {
			t.Fatalf("decodeAny(%q) error %v, but valid, unrepeated, UTF-8 and in range = %v", data, err, valid)
		}
		if !valid {
			if len(err.Error()) > 200 {
				t.Fatalf("decodeAny(%q): an error of %d bytes: %v", data, len(err.Error()), err)
			}
			return
		}
		var want any // encoding/json, numbers exact
		if err := jsonx.Decode(data, &want); err != nil {
			t.Fatalf("encoding/json rejects valid %q: %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeAny(%q) = %#v, encoding/json reads %#v", data, got, want)
		}
	})
}

// fuzzNames are FuzzDecode's interned keys: decodeAny reads a key that is
// one of them, escaped or not, as it reads any other.
var fuzzNames = map[string]string{"a": "a", "k": "k", "b\n": "b\n", "": ""}

// A key that is one of names costs no string, and an array's items one
// allocation, whatever their number. (readTree on a decoder of its own:
// the race detector drops decodeAny's pooled ones at random.)
func TestDecodeAnyAllocations(t *testing.T) {
	var src bytes.Reader
	var dec jsontext.Decoder
	allocs := func(data string, names map[string]string) float64 {
		b := []byte(data)
		return testing.AllocsPerRun(100, func() {
			src.Reset(b)
			dec.Reset(&src)
			if _, err := readTree(&dec, names); err != nil {
				t.Fatal(err)
			}
		})
	}
	names := map[string]string{"one": "one", "two": "two"}
	for _, c := range []struct {
		what      string
		more, was float64
		want      float64
	}{
		{"eight items over one", allocs(`[true,false,true,false,true,false,true,false]`, nil), allocs(`[true]`, nil), 0},
		{"two keys not in names over in names", allocs(`{"one":true,"two":false}`, nil), allocs(`{"one":true,"two":false}`, names), 2},
		{"an escaped key over a plain one, in names", allocs(`{"\u006fne":true}`, names), allocs(`{"one":true}`, names), 1}, // unquoted first
	} {
		if d := c.more - c.was; d != c.want {
			t.Errorf("%s: %v allocations more (%v, not %v), want %v", c.what, d, c.more, c.was, c.want)
		}
	}
}

// propertyNames finds the names of properties at any depth, and no other
// key of the schema.
func TestPropertyNames(t *testing.T) {
	doc, err := readSchemaDoc(`{"$defs":{"Spec":{"type":"object","properties":{"questions":{"type":"array",
		"items":{"properties":{"label":{"type":"string"}}}}}},"Values":{"anyOf":[{"properties":{"answers":{}}}]}}}`, "t.json")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"questions": "questions", "label": "label", "answers": "answers", "reason": "reason"}
	if got := propertyNames(doc.doc); !reflect.DeepEqual(got, want) {
		t.Errorf("propertyNames = %v, want %v", got, want)
	}
}

// loneSurrogate reports a \u escape in valid JSON data that is half of a
// UTF-16 surrogate pair without its other half.
func loneSurrogate(data []byte) bool {
	hex := func(i int) (uint64, bool) { // the \uXXXX at data[i:]
		if i+6 > len(data) || data[i] != '\\' || data[i+1] != 'u' {
			return 0, false
		}
		r, err := strconv.ParseUint(string(data[i+2:i+6]), 16, 16)
		return r, err == nil
	}
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' {
			continue
		}
		r, ok := hex(i)
		if !ok {
			i++ // another escape: skip its letter, which may be a backslash
			continue
		}
		switch {
		case r >= 0xdc00 && r <= 0xdfff:
			return true
		case r >= 0xd800 && r <= 0xdbff:
			if low, ok := hex(i + 6); !ok || low < 0xdc00 || low > 0xdfff {
				return true
			}
			i += 6
		}
		i += 5
	}
	return false
}

// outOfRange reports a number in valid JSON data longer than 400 bytes or
// with an exponent beyond ±400, read as big.Rat and strconv read them.
func outOfRange(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		n, ok := tok.(json.Number)
		if !ok {
			continue
		}
		if len(n) > 400 {
			return true
		}
		if _, exp, found := strings.Cut(strings.ToLower(string(n)), "e"); found {
			if e, err := strconv.ParseInt(exp, 10, 64); err != nil || e > 400 || e < -400 {
				return true
			}
		}
	}
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

// A key twice in one object is refused, named (at most 64 bytes of it) at
// its offset, at any depth; the same key in sibling or nested objects, or in
// another case, is no repeat.
func TestDecodeRepeatedKey(t *testing.T) {
	long := strings.Repeat("é", 40) // 80 bytes
	for data, want := range map[string]string{
		`{"k":"v","k":"w"}`: `duplicate key "k" at offset 9`,
		`{"nested":{"header":"a"},"nested":{"score":1}}`: `duplicate key "nested" at offset 25`,
		`{"a":1,"\u0061":2}`:                             `duplicate key "a" at offset 7`,
		`[{"answers":[{"header":"x","header":"y"}]}]`:    `duplicate key "header" at offset 27`,
		`{"a/b~c":1,"a/b~c":2}`:                          `duplicate key "a/b~c" at offset 11`,
		`{"` + long + `":1,"` + long + `":2}`:            `duplicate key "` + strings.Repeat("é", 32) + `…" at offset 86`,
	} {
		if _, err := decodeAny([]byte(data), nil); err == nil || err.Error() != want {
			t.Errorf("decodeAny(%s): %v, want %s", data, err, want)
		}
	}
	for _, data := range []string{`[{"k":1},{"k":2}]`, `{"k":{"k":1}}`, `{"a":1,"A":2}`} {
		if _, err := decodeAny([]byte(data), nil); err != nil {
			t.Errorf("decodeAny(%s): %v", data, err)
		}
	}
}

// What encoding/json lets through, or cannot hold, is a clean error or an
// exact number: never a panic, never a guess. A number the validator cannot
// read quickly is refused.
func TestDecodeEdges(t *testing.T) {
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	for data, want := range map[string]string{
		deep:         "exceeded max depth at offset 10000",
		"\"a\xffb\"": "invalid UTF-8 at offset 2",
		`"\udc00"`:   "invalid surrogate pair `\\udc00\"` in string at offset 1",
		`{"a":1} {}`: "invalid character '{' after top-level value at offset 8",
		`{"a":1`:     "unexpected end of JSON input at offset 6",
		``:           "unexpected end of JSON input at offset 0",
		`[0,1e999]`:  "number 1e999 is out of range (at most 400 characters, exponent within ±400) at offset 3",
	} {
		if _, err := decodeAny([]byte(data), nil); err == nil || err.Error() != want {
			t.Errorf("decodeAny(%.20q): %v, want %s", data, err, want)
		}
	}
	huge := `[1e400,123456789012345678901234567890,-0.0]`
	v, err := decodeAny([]byte(huge), nil)
	if want := []any{json.Number("1e400"), json.Number("123456789012345678901234567890"), json.Number("-0.0")}; err != nil || !reflect.DeepEqual(v, want) {
		t.Errorf("decodeAny(%s) = %#v, %v; want %#v", huge, v, err, want)
	}
	if _, err := decodeTyped[fillTarget](map[string]any{"ratio": json.Number("1e999")}); err == nil {
		t.Error("decodeTyped put 1e999 into a float64")
	}
}

// decodeTyped honours a type's own UnmarshalJSON, as encoding/json does.
func TestDecodeTypedUnmarshaler(t *testing.T) {
	tree, err := decodeAny([]byte(`{"word":"hi","nested":{"word":"yo"}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeTyped[struct {
		Word   upper `json:"word"`
		Nested struct {
			Word upper `json:"word"`
		} `json:"nested"`
	}](tree)
	if err != nil || got.Word != "HI" || got.Nested.Word != "YO" {
		t.Errorf("decodeTyped = %+v, %v; want HI and YO", got, err)
	}
}

type upper string

func (u *upper) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*u = upper(strings.ToUpper(s))
	return nil
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

// FuzzTyped: decodeTyped of a decoded tree gives what json.Unmarshal of the
// bytes gives, and fails where it fails. Keys that match a field only by
// case are left out: encoding/json matches them, decodeTyped (behind a
// schema that names every key exactly) does not. It also gives what json
// v2's Unmarshal of the bytes gives, which is how decodeValues reads values
// that were valid as sent.
func FuzzTyped(f *testing.F) {
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
		tree, err := decodeAny(data, nil)
		if err != nil || caseOnlyKey(tree) {
			return
		}
		var want fillTarget
		wantErr := json.Unmarshal(data, &want)
		got, gotErr := decodeTyped[fillTarget](tree)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("%s: json.Unmarshal error %v, decodeTyped error %v", data, wantErr, gotErr)
		}
		if wantErr == nil && !reflect.DeepEqual(*got, want) {
			t.Fatalf("%s: decodeTyped = %+v, json.Unmarshal = %+v", data, *got, want)
		}
		var direct fillTarget
		directErr := jsonv2.Unmarshal(data, &direct)
		if (directErr == nil) != (gotErr == nil) {
			t.Fatalf("%s: json v2 Unmarshal error %v, decodeTyped error %v", data, directErr, gotErr)
		}
		if directErr == nil && !reflect.DeepEqual(*got, direct) {
			t.Fatalf("%s: decodeTyped = %+v, json v2 Unmarshal = %+v", data, *got, direct)
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

// choicesNames are the choices kind's property names, as NewKind reads
// them (propertyNames).
var choicesNames = map[string]string{"questions": "questions", "question": "question", "header": "header", "options": "options",
	"label": "label", "description": "description", "multiSelect": "multiSelect", "answers": "answers", "other": "other", "reason": "reason"}

// BenchmarkDecodeAny reads a raise's arguments, the demo card's, into the
// tree the validator walks: what every raise pays.
func BenchmarkDecodeAny(b *testing.B) {
	args := []byte(`{"questions":[{"question":"Which plan fits your team?","header":"Plan","options":[{"label":"Starter","description":"Up to 5 seats"},` +
		`{"label":"Team","description":"Up to 50 seats"},{"label":"Enterprise","description":"SSO, audit log, 99.9% SLA"}]},` +
		`{"question":"What should we cover?","header":"Topics","multiSelect":true,"options":[{"label":"Pricing"},{"label":"Security"},{"label":"Integrations"}]}],` +
		`"reason":"so I can tailor the quote","limit":3}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeAny(args, choicesNames); err != nil {
			b.Fatal(err)
		}
	}
}
