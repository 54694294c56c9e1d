package kindkit

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"
)

// A submit's values are read once: parse turns the bytes into the generic
// tree the schema validator walks (numbers kept exact as json.Number), and
// fill copies that tree into the kind's struct, so the bytes are not
// decoded twice. Both accept what encoding/json accepts and give the same
// result (fuzzed against it in decode_test.go), except an object that
// repeats a key: encoding/json keeps the last value, or merges the values
// into a struct, so which answer was meant is a guess; parse refuses it.

// parse reads one JSON value; data after it is an error.
func parse(data []byte) (any, error) {
	p := parser{data: data}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.data) {
		return nil, p.fail("unexpected data after the JSON value")
	}
	return v, nil
}

type parser struct {
	data []byte
	i    int
}

const maxDepth = 10000 // encoding/json's limit

func (p *parser) fail(msg string) error {
	return fmt.Errorf("%s at offset %d", msg, p.i)
}

func (p *parser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.fail("exceeded max depth")
	}
	if p.i >= len(p.data) {
		return nil, p.fail("unexpected end of JSON input")
	}
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.string()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case p.literal("true"):
		return true, nil
	case p.literal("false"):
		return false, nil
	case p.literal("null"):
		return nil, nil
	}
	return nil, p.fail("invalid character")
}

func (p *parser) literal(word string) bool {
	if len(p.data)-p.i >= len(word) && string(p.data[p.i:p.i+len(word)]) == word {
		p.i += len(word)
		return true
	}
	return false
}

func (p *parser) object(depth int) (any, error) {
	p.i++ // {
	m := map[string]any{}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return m, nil
	}
	for {
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, p.fail("expected a string key")
		}
		start := p.i
		k, err := p.string()
		if err != nil {
			return nil, err
		}
		if _, dup := m[k.(string)]; dup {
			p.i = start
			return nil, p.fail(fmt.Sprintf("duplicate key %q", shortKey(k.(string))))
		}
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, p.fail("expected ':'")
		}
		p.i++
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[k.(string)] = v
		if done, err := p.next('}'); err != nil {
			return nil, err
		} else if done {
			return m, nil
		}
	}
}

func (p *parser) array(depth int) (any, error) {
	p.i++ // [
	a := []any{}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return a, nil
	}
	for {
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		if done, err := p.next(']'); err != nil {
			return nil, err
		} else if done {
			return a, nil
		}
	}
}

// next reads what follows an element of an object or array: a ',' before
// another element, or the closing byte, after which done is true.
func (p *parser) next(closing byte) (done bool, err error) {
	p.space()
	if p.i >= len(p.data) {
		return false, p.fail("unexpected end of JSON input")
	}
	switch p.data[p.i] {
	case ',':
		p.i++
		return false, nil
	case closing:
		p.i++
		return true, nil
	}
	return false, p.fail("expected ',' or '" + string(closing) + "'")
}

// string reads a string. Plain ASCII without escapes is sliced directly;
// anything else is handed to encoding/json for its exact unescaping and
// invalid-UTF-8 replacement.
func (p *parser) string() (any, error) {
	start := p.i
	p.i++ // "
	plain := true
	for p.i < len(p.data) {
		c := p.data[p.i]
		switch {
		case c == '"':
			p.i++
			if plain {
				return string(p.data[start+1 : p.i-1]), nil
			}
			var s string
			if err := json.Unmarshal(p.data[start:p.i], &s); err != nil {
				return nil, err
			}
			return s, nil
		case c == '\\':
			plain = false
			p.i += 2
			continue
		case c < 0x20:
			return nil, p.fail("invalid character in string literal")
		case c >= utf8.RuneSelf:
			plain = false
		}
		p.i++
	}
	p.i = len(p.data)
	return nil, p.fail("unexpected end of JSON input")
}

// number reads a number with JSON's grammar and keeps its text.
func (p *parser) number() (any, error) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.data) && p.data[p.i] >= '0' && p.data[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.data[p.i] == '-' {
		p.i++
	}
	if p.i < len(p.data) && p.data[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return nil, p.fail("invalid number")
	}
	if p.i < len(p.data) && p.data[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, p.fail("invalid number")
		}
	}
	if p.i < len(p.data) && (p.data[p.i] == 'e' || p.data[p.i] == 'E') {
		p.i++
		if p.i < len(p.data) && (p.data[p.i] == '+' || p.data[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, p.fail("invalid number")
		}
	}
	return json.Number(p.data[start:p.i]), nil
}

// fill copies a parsed tree into dst (a pointer), as json.Unmarshal of the
// same bytes would. The tree has passed the kind's schema, so a mismatch is
// rare; it is an error, never a panic.
func fill(dst any, v any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errors.New("fill: want a non-nil pointer")
	}
	return fillValue(rv.Elem(), v)
}

var errNumber = errors.New("number out of range")

func fillValue(dst reflect.Value, v any) error {
	if v == nil {
		switch dst.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			dst.SetZero()
		}
		return nil // encoding/json leaves other kinds alone on null
	}
	switch dst.Kind() {
	case reflect.Pointer:
		if dst.IsNil() {
			dst.Set(reflect.New(dst.Type().Elem()))
		}
		return fillValue(dst.Elem(), v)
	case reflect.Interface:
		if dst.NumMethod() != 0 {
			break
		}
		dst.Set(reflect.ValueOf(plainTree(v)))
		return nil
	case reflect.String:
		if s, ok := v.(string); ok {
			dst.SetString(s)
			return nil
		}
	case reflect.Bool:
		if b, ok := v.(bool); ok {
			dst.SetBool(b)
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n, ok := v.(json.Number); ok {
			i, err := n.Int64()
			if err != nil || dst.OverflowInt(i) {
				return errNumber
			}
			dst.SetInt(i)
			return nil
		}
	case reflect.Float32, reflect.Float64:
		if n, ok := v.(json.Number); ok {
			f, err := n.Float64()
			if err != nil || dst.OverflowFloat(f) {
				return errNumber
			}
			dst.SetFloat(f)
			return nil
		}
	case reflect.Slice:
		if a, ok := v.([]any); ok {
			s := reflect.MakeSlice(dst.Type(), len(a), len(a))
			for i, e := range a {
				if err := fillValue(s.Index(i), e); err != nil {
					return err
				}
			}
			dst.Set(s)
			return nil
		}
	case reflect.Map:
		if m, ok := v.(map[string]any); ok && dst.Type().Key().Kind() == reflect.String {
			out := reflect.MakeMapWithSize(dst.Type(), len(m))
			for k, e := range m {
				ev := reflect.New(dst.Type().Elem()).Elem()
				if err := fillValue(ev, e); err != nil {
					return err
				}
				out.SetMapIndex(reflect.ValueOf(k).Convert(dst.Type().Key()), ev)
			}
			dst.Set(out)
			return nil
		}
	case reflect.Struct:
		if m, ok := v.(map[string]any); ok {
			for _, f := range structFields(dst.Type()) {
				e, ok := m[f.name]
				if !ok {
					continue
				}
				if err := fillValue(dst.Field(f.index), e); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return fmt.Errorf("cannot read %T into %s", v, dst.Type())
}

// plainTree turns json.Number into float64, as encoding/json fills an
// interface.
func plainTree(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, _ := v.Float64()
		return f
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = plainTree(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = plainTree(e)
		}
		return out
	}
	return v
}

type field struct {
	name  string
	index int
}

var fieldCache sync.Map // reflect.Type → []field

// structFields lists a struct's exported fields by their JSON names. The
// generated structs have no embedded fields; names must match exactly,
// since the schema already rejected any other key.
func structFields(t reflect.Type) []field {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]field)
	}
	var fields []field
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		fields = append(fields, field{name, i})
	}
	fieldCache.Store(t, fields)
	return fields
}

// shortKey is a key as an error names it: at most 64 bytes of it, so an
// error never echoes a huge input back.
func shortKey(k string) string {
	const n = 64
	if len(k) <= n {
		return k
	}
	i := n
	for i > 0 && !utf8.RuneStart(k[i]) {
		i--
	}
	return k[:i] + "…"
}
