package kindkit

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A precheck tells, without allocating, that a value is valid against a
// kind's schema, for the part of JSON Schema 2020-12 that kinds are written
// in. The validator (santhosh-tekuri/jsonschema) allocates at every node it
// visits: for the demo card, 6.2 KB and 98 allocations to check the raise
// and 2.7 KB and 41 to check the submit, in 7.2 and 2.9 µs; the precheck
// takes 1.1 and 0.45 µs and allocates nothing (BenchmarkValidate). In
// kindload's cycle on the memory store that was 10 KB of its 38 KB beyond
// the floor (BenchmarkCycle). A value the precheck finds valid is valid.
// Any other value goes to the validator, whose messages are the ones the
// model and the person read. The precheck is unsure of every keyword it
// does not read, so a schema that uses one still validates exactly, only
// more slowly; FuzzPrecheck holds it to the validator's verdicts.
type precheck struct {
	reject   bool // the schema false
	unknown  bool // a keyword the precheck does not read, or a ref cycle: unsure
	types    typeSet
	ref      *precheck
	props    map[string]*precheck
	required []string
	closed   bool      // additionalProperties false
	extra    *precheck // the additionalProperties schema; nil when any
	items    *precheck
	// Counts, -1 when absent.
	minItems, maxItems, minLength, maxLength, minProps, maxProps int
	bounds                                                       []bound
	enum                                                         []any // strings, bools and nil only
	hasEnum                                                      bool
	allOf, anyOf, oneOf                                          []*precheck
	not                                                          *precheck
}

type verdict uint8

const (
	unsure verdict = iota
	passes
	fails
)

// worse is the verdict of two checks that must both pass.
func worse(a, b verdict) verdict {
	if a == fails || b == fails {
		return fails
	}
	if a == unsure || b == unsure {
		return unsure
	}
	return passes
}

type typeSet uint8

const (
	typeNull typeSet = 1 << iota
	typeBoolean
	typeObject
	typeArray
	typeNumber
	typeInteger
	typeString
)

var typeNames = map[string]typeSet{
	"null": typeNull, "boolean": typeBoolean, "object": typeObject, "array": typeArray,
	"number": typeNumber | typeInteger, "integer": typeInteger, "string": typeString,
}

// A bound is minimum, maximum or their exclusive forms, at an integer.
type bound struct {
	limit   int64
	keyword string
}

// annotations are the 2020-12 keywords that assert nothing, as the
// validator is configured (format and content are not asserted).
var annotations = map[string]bool{
	"$comment": true, "$anchor": true, "$dynamicAnchor": true, "$defs": true, "definitions": true,
	"title": true, "description": true, "default": true, "deprecated": true, "readOnly": true,
	"writeOnly": true, "examples": true, "format": true,
}

// draft2020 is the one draft the precheck reads; a schema that names
// another is left to the validator, whose keywords differ there.
const draft2020 = "https://json-schema.org/draft/2020-12/schema"

// newPrecheck reads the schema at pointer (a JSON pointer fragment such as
// "#/$defs/Spec") of the schema document root, decoded with numbers as
// json.Number.
func newPrecheck(root any, pointer string) *precheck {
	if m, ok := root.(map[string]any); ok {
		if s, ok := m["$schema"]; ok && s != draft2020 {
			return &precheck{unknown: true}
		}
	}
	c := &prechecker{root: root, refs: map[string]*precheck{}}
	p := c.ref(pointer)
	c.breakCycles()
	return p
}

type prechecker struct {
	root any
	refs map[string]*precheck // by pointer, so that recursive schemas end
	all  []*precheck
}

// ref reads the schema a local reference names: "#" or a JSON pointer
// without escapes. Any other reference is unsure.
func (c *prechecker) ref(pointer string) *precheck {
	if p, ok := c.refs[pointer]; ok {
		return p
	}
	p := &precheck{unknown: true}
	c.refs[pointer] = p
	if !strings.HasPrefix(pointer, "#") || strings.ContainsAny(pointer, "~%") {
		return p
	}
	s := c.root
	if path := pointer[1:]; path != "" {
		if path[0] != '/' {
			return p // an anchor
		}
		for i, name := range strings.Split(path[1:], "/") {
			m, ok := s.(map[string]any)
			if !ok {
				return p
			}
			if _, id := m["$id"]; id && i > 0 {
				return p // refs below it are relative to another base
			}
			if s, ok = m[name]; !ok {
				return p
			}
		}
	}
	c.fill(p, s, pointer == "#")
	return p
}

func (c *prechecker) schema(s any) *precheck {
	p := new(precheck)
	c.fill(p, s, false)
	return p
}

func (c *prechecker) fill(p *precheck, s any, root bool) {
	*p = precheck{minItems: -1, maxItems: -1, minLength: -1, maxLength: -1, minProps: -1, maxProps: -1}
	c.all = append(c.all, p)
	switch s := s.(type) {
	case bool:
		p.reject = !s
	case map[string]any:
		for k, v := range s {
			if !c.keyword(p, k, v, root) {
				p.unknown = true
			}
		}
	default:
		p.unknown = true
	}
}

// keyword reads one keyword into p, and reports whether it could: false
// for an assertion it does not read or a value it does not expect.
func (c *prechecker) keyword(p *precheck, k string, v any, root bool) bool {
	if annotations[k] || strings.HasPrefix(k, "x-") {
		return true
	}
	count := func(into *int) bool {
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		i, err := strconv.Atoi(string(n))
		*into = i
		return err == nil && i >= 0
	}
	list := func(into *[]*precheck) bool {
		a, ok := v.([]any)
		for _, s := range a {
			*into = append(*into, c.schema(s))
		}
		return ok && len(a) > 0
	}
	switch k {
	case "$schema", "$id":
		return root // elsewhere they change the draft or the base of refs
	case "$ref":
		r, ok := v.(string)
		p.ref = c.ref(r)
		return ok
	case "type":
		switch t := v.(type) {
		case string:
			p.types = typeNames[t]
			return p.types != 0
		case []any:
			for _, e := range t {
				name, _ := e.(string)
				if typeNames[name] == 0 {
					return false
				}
				p.types |= typeNames[name]
			}
			return len(t) > 0
		}
		return false
	case "properties":
		m, ok := v.(map[string]any)
		p.props = make(map[string]*precheck, len(m))
		for name, s := range m {
			p.props[name] = c.schema(s)
		}
		return ok
	case "required":
		a, ok := v.([]any)
		for _, e := range a {
			name, isString := e.(string)
			if !isString {
				return false
			}
			p.required = append(p.required, name)
		}
		return ok
	case "additionalProperties":
		if b, ok := v.(bool); ok {
			p.closed = !b
			return true
		}
		p.extra = c.schema(v)
		return true
	case "items":
		if _, ok := v.([]any); ok {
			return false // an earlier draft's tuple
		}
		p.items = c.schema(v)
		return true
	case "minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties":
		return count(map[string]*int{"minItems": &p.minItems, "maxItems": &p.maxItems, "minLength": &p.minLength,
			"maxLength": &p.maxLength, "minProperties": &p.minProps, "maxProperties": &p.maxProps}[k])
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		n, ok := v.(json.Number)
		limit, err := strconv.ParseInt(string(n), 10, 64)
		p.bounds = append(p.bounds, bound{limit: limit, keyword: k})
		return ok && err == nil
	case "enum", "const":
		members, ok := v.([]any)
		if k == "const" {
			members, ok = []any{v}, true
		}
		for _, m := range members {
			switch m.(type) {
			case string, bool, nil:
			default:
				return false
			}
		}
		if p.hasEnum {
			return false // both: the precheck keeps one list
		}
		p.enum, p.hasEnum = members, true
		return ok
	case "allOf":
		return list(&p.allOf)
	case "anyOf":
		return list(&p.anyOf)
	case "oneOf":
		return list(&p.oneOf)
	case "not":
		p.not = c.schema(v)
		return true
	}
	// Not a keyword of 2020-12's, or one the precheck does not read.
	return !asserting[k]
}

// asserting are the keywords, of 2020-12 and of the drafts before it, that
// the precheck does not read and the validator may assert.
var asserting = map[string]bool{
	"prefixItems": true, "contains": true, "minContains": true, "maxContains": true, "uniqueItems": true,
	"patternProperties": true, "propertyNames": true, "dependentSchemas": true, "dependentRequired": true,
	"dependencies": true, "additionalItems": true, "if": true, "then": true, "else": true,
	"unevaluatedItems": true, "unevaluatedProperties": true, "multipleOf": true, "pattern": true,
	"$dynamicRef": true, "$recursiveRef": true, "$recursiveAnchor": true, "$vocabulary": true,
	"contentEncoding": true, "contentMediaType": true, "contentSchema": true,
}

// breakCycles makes unsure every schema that reaches itself without
// reading into the value ($ref, allOf, anyOf, oneOf, not): checking it
// would not end.
func (c *prechecker) breakCycles() {
	const (
		unvisited = iota
		onPath
		done
	)
	state := map[*precheck]int{}
	var visit func(p *precheck) bool
	visit = func(p *precheck) (cycle bool) {
		switch state[p] {
		case onPath:
			return true
		case done:
			return false
		}
		state[p] = onPath
		next := append(append(append([]*precheck{p.ref, p.not}, p.allOf...), p.anyOf...), p.oneOf...)
		for _, q := range next {
			if q != nil && visit(q) {
				cycle = true
			}
		}
		state[p] = done
		if cycle {
			p.unknown = true
		}
		return cycle
	}
	for _, p := range c.all {
		visit(p)
	}
}

// check tells whether v, a tree decodeAny read (maps, slices, strings,
// bools, nil and json.Number) as a kind's rules may have rewritten it, is
// valid.
func (p *precheck) check(v any) verdict {
	switch {
	case p.reject:
		return fails
	case p.unknown:
		return unsure
	}
	have, maybe := typeOf(v)
	if have == 0 {
		return unsure // a Go type the decoder does not make
	}
	out := passes
	if p.types != 0 && p.types&have == 0 {
		if p.types&maybe == 0 {
			return fails
		}
		out = unsure // a number such as 1.0 or 1e2, which may be an integer
	}
	switch v := v.(type) {
	case string:
		if p.minLength >= 0 || p.maxLength >= 0 {
			n := utf8.RuneCountInString(v)
			if n < p.minLength || p.maxLength >= 0 && n > p.maxLength {
				return fails
			}
		}
	case json.Number:
		out = worse(out, p.checkBounds(v))
	case map[string]any:
		out = worse(out, p.checkObject(v))
	case []any:
		if len(v) < p.minItems || p.maxItems >= 0 && len(v) > p.maxItems {
			return fails
		}
		if p.items != nil {
			for _, e := range v {
				if out = worse(out, p.items.check(e)); out == fails {
					return fails
				}
			}
		}
	}
	if p.hasEnum {
		out = worse(out, p.checkEnum(v))
	}
	if p.ref != nil {
		out = worse(out, p.ref.check(v))
	}
	for _, s := range p.allOf {
		out = worse(out, s.check(v))
	}
	if out == fails {
		return fails
	}
	if len(p.anyOf) > 0 {
		out = worse(out, anyOf(p.anyOf, v))
	}
	if len(p.oneOf) > 0 {
		out = worse(out, oneOf(p.oneOf, v))
	}
	if p.not != nil {
		switch p.not.check(v) {
		case passes:
			return fails
		case unsure:
			out = worse(out, unsure)
		}
	}
	return out
}

// typeOf is the types v has and those it may have (a number written with
// a fraction or an exponent may be an integer).
func typeOf(v any) (have, maybe typeSet) {
	switch v := v.(type) {
	case nil:
		return typeNull, 0
	case bool:
		return typeBoolean, 0
	case string:
		return typeString, 0
	case map[string]any:
		return typeObject, 0
	case []any:
		return typeArray, 0
	case json.Number:
		if strings.ContainsAny(string(v), ".eE") {
			return typeNumber, typeInteger
		}
		return typeNumber | typeInteger, 0
	}
	return 0, 0
}

func (p *precheck) checkBounds(n json.Number) verdict {
	if len(p.bounds) == 0 {
		return passes
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return unsure // a fraction, an exponent or a huge number
	}
	for _, b := range p.bounds {
		var ok bool
		switch b.keyword {
		case "minimum":
			ok = i >= b.limit
		case "maximum":
			ok = i <= b.limit
		case "exclusiveMinimum":
			ok = i > b.limit
		case "exclusiveMaximum":
			ok = i < b.limit
		}
		if !ok {
			return fails
		}
	}
	return passes
}

func (p *precheck) checkObject(m map[string]any) verdict {
	if len(m) < p.minProps || p.maxProps >= 0 && len(m) > p.maxProps {
		return fails
	}
	for _, name := range p.required {
		if _, ok := m[name]; !ok {
			return fails
		}
	}
	out := passes
	for name, e := range m {
		s, ok := p.props[name]
		switch {
		case ok:
		case p.closed:
			return fails
		case p.extra != nil:
			s = p.extra
		default:
			continue
		}
		if out = worse(out, s.check(e)); out == fails {
			return fails
		}
	}
	return out
}

// checkEnum compares v with members that are strings, bools or nil; a
// value of another type equals none of them.
func (p *precheck) checkEnum(v any) verdict {
	for _, m := range p.enum {
		if m == v {
			return passes
		}
	}
	return fails
}

func anyOf(schemas []*precheck, v any) verdict {
	out := fails
	for _, s := range schemas {
		switch s.check(v) {
		case passes:
			return passes
		case unsure:
			out = unsure
		}
	}
	return out
}

func oneOf(schemas []*precheck, v any) verdict {
	n := 0
	for _, s := range schemas {
		switch s.check(v) {
		case passes:
			n++
		case unsure:
			return unsure
		}
	}
	if n == 1 {
		return passes
	}
	return fails
}

// schema is a compiled schema with its precheck: Validate runs the
// validator only for a value the precheck does not find valid.
type schema struct {
	pre  *precheck
	full *jsonschema.Schema
}

func (s schema) Validate(v any) error {
	if s.pre.check(v) == passes {
		return nil
	}
	return s.full.Validate(v)
}
