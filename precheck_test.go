package kindkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// compileAt compiles the schema at pointer of doc as NewKind does.
func compileAt(tb testing.TB, doc, pointer string) schema {
	tb.Helper()
	d, err := readSchemaDoc(doc, "test.json")
	if err != nil {
		tb.Fatal(err)
	}
	s, err := d.compile(pointer)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// kindSchemas are the shipped kinds' schema documents.
func kindSchemas(tb testing.TB) map[string]string {
	tb.Helper()
	files, err := filepath.Glob("spec/interactions/*.schema.json")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no kind schemas: %v", err)
	}
	docs := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		docs[strings.TrimSuffix(filepath.Base(f), ".schema.json")] = string(b)
	}
	return docs
}

// precheckCases are values for the shipped kinds' Spec and Values that
// their schemas accept: the precheck must find each valid by itself, or
// every raise and submit of that kind would pay for the validator.
var precheckCases = []struct{ kind, def, value string }{
	{"choices", "Spec", `{"questions":[{"question":"Which plan?","header":"Plan","options":[{"label":"Starter","description":"5 seats"},{"label":"Team"}]},{"question":"Topics?","header":"Topics","multiSelect":true,"options":[{"label":"a"},{"label":"b"},{"label":"c"}]}]}`},
	{"choices", "Values", `{"answers":[{"header":"Plan","options":["Team"]},{"header":"Topics","options":[],"other":"Partnerships"}]}`},
	{"rating", "Spec", `{"question":"How was it?","scale":{"min":1,"max":5,"minLabel":"bad","maxLabel":"great"},"allowComment":true}`},
	{"rating", "Values", `{"score":4,"comment":"fine"}`},
	{"identity-intake", "Spec", `{"fields":[{"key":"name","required":true},{"key":"email","required":false,"label":"Work email"}]}`},
	{"identity-intake", "Values", `{"name":"Ada","email":"ada@example.com"}`},
	{"elicitation", "Spec", `{"server":"calendar","message":"Pick a slot","requestedSchema":{"type":"object","properties":{}}}`},
	{"elicitation", "Values", `{"slot":"10:00","confirm":true}`},
}

func TestPrecheckPassesKinds(t *testing.T) {
	docs := kindSchemas(t)
	for _, c := range precheckCases {
		s := compileAt(t, docs[c.kind], "#/$defs/"+c.def)
		tree, err := decodeAny([]byte(c.value), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.full.Validate(tree); err != nil {
			t.Fatalf("%s %s: the case is invalid: %v", c.kind, c.def, err)
		}
		if got := s.pre.check(tree); got != passes {
			t.Errorf("%s %s: precheck says %d, not passes, of %s", c.kind, c.def, got, c.value)
		}
	}
}

// The precheck reads no allocation into a check: that is what it is for.
func TestPrecheckAllocatesNothing(t *testing.T) {
	docs := kindSchemas(t)
	for _, c := range precheckCases {
		pre := compileAt(t, docs[c.kind], "#/$defs/"+c.def).pre
		tree, _ := decodeAny([]byte(c.value), nil)
		if n := testing.AllocsPerRun(20, func() { pre.check(tree) }); n != 0 {
			t.Errorf("%s %s: %v allocations a check", c.kind, c.def, n)
		}
	}
}

// precheckSchemas exercise every keyword the precheck reads, and some it
// leaves to the validator.
var precheckSchemas = []string{
	`{"type":"string","minLength":2,"maxLength":3}`,
	`{"type":["string","null"],"enum":["a","b",null,true]}`,
	`{"const":"x"}`, `{"const":1}`, `{"enum":[{"a":1}]}`,
	`{"type":"integer","minimum":-3,"maximum":7}`,
	`{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":10}`,
	`{"minimum":1.5}`, `{"type":"integer"}`, `{"type":"number"}`,
	`{"type":"object","required":["a"],"properties":{"a":{"type":"boolean"}},"additionalProperties":false,"minProperties":1,"maxProperties":2}`,
	`{"type":"object","additionalProperties":{"type":"string"}}`,
	`{"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":2}`,
	`{"items":[{"type":"string"}]}`,
	`{"anyOf":[{"type":"string"},{"type":"integer"}]}`,
	`{"oneOf":[{"type":"integer"},{"type":"number"}]}`,
	`{"oneOf":[{"required":["a"]},{"required":["b"]}]}`,
	`{"allOf":[{"minLength":1},{"maxLength":2}],"not":{"const":"z"}}`,
	`{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`,
	`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`,
	`{"$ref":"#","type":"object"}`,
	`{"type":"string","pattern":"^a","format":"email","x-ui":{"label":"x"}}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","$ref":"#/definitions/s","type":"integer","definitions":{"s":{"type":"string"}}}`,
	`{"properties":{"a":{"$id":"other.json","$ref":"#/$defs/x","$defs":{"x":{"type":"string"}}}},"$defs":{"x":{"type":"integer"}}}`,
	`{"$defs":{"x":{"$id":"other.json","$defs":{"y":{"$ref":"#/$defs/z"},"z":{"type":"string"}}},"z":{"type":"integer"}},"$ref":"#/$defs/x/$defs/y"}`,
	`{"unevaluatedProperties":false,"properties":{"a":true}}`,
	`false`, `true`, `{"not":{}}`,
}

var precheckValues = []string{
	`"a"`, `"ab"`, `"abcd"`, `"é😀"`, `null`, `true`, `false`, `0`, `-3`, `-4`, `7`, `8`, `1.0`, `1.5`, `1e2`, `10`,
	`123456789012345678901234567890`, `{}`, `{"a":true}`, `{"a":1}`, `{"a":true,"b":2}`, `{"b":"x"}`, `{"next":{"next":{}}}`,
	`{"next":{"next":1}}`, `[]`, `[1]`, `[1,2]`, `[1,2,3]`, `["x"]`, `"z"`, `"x"`, `{"a":1,"b":2}`,
}

// FuzzPrecheck: what the precheck finds valid the validator finds valid,
// and what it finds invalid the validator finds invalid, for any schema
// the validator compiles and any value; and no schema makes it panic.
func FuzzPrecheck(f *testing.F) {
	for _, s := range precheckSchemas {
		for _, v := range precheckValues {
			f.Add(s, "#", v)
		}
	}
	for kind, doc := range kindSchemas(f) {
		for _, c := range precheckCases {
			if c.kind == kind {
				f.Add(doc, "#/$defs/"+c.def, c.value)
			}
		}
	}
	f.Fuzz(func(t *testing.T, doc, pointer, value string) {
		d, err := readSchemaDoc(doc, "fuzz.json")
		if err != nil {
			return
		}
		newPrecheck(d.doc, pointer) // of any schema, compiled or not: no panic
		s, err := d.compile(pointer)
		if err != nil {
			return
		}
		tree, err := decodeAny([]byte(value), nil)
		if err != nil {
			return
		}
		got, err := s.pre.check(tree), s.full.Validate(tree)
		if got == passes && err != nil || got == fails && err == nil {
			t.Fatalf("schema %s at %s, value %s: precheck says %d, validator says %v", doc, pointer, value, got, err)
		}
	})
}

// BenchmarkValidate checks the choices kind's spec and values, the demo
// card's, with the validator alone and with the precheck before it, which
// is what a raise and a submit pay.
func BenchmarkValidate(b *testing.B) {
	docs := kindSchemas(b)
	for _, c := range precheckCases[:2] {
		both := compileAt(b, docs[c.kind], "#/$defs/"+c.def)
		tree, _ := decodeAny([]byte(c.value), nil)
		for _, s := range []struct {
			name string
			s    interface{ Validate(any) error }
		}{{"validator", both.full}, {"precheck", both}} {
			b.Run(c.def+"/"+s.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := s.s.Validate(tree); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
