package jsonx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Object is a JSON object that keeps its keys in document order, which
// encoding/json's maps do not: the schemas kindgen writes keep the authored
// property order, and a form derived from them (elicit) lists its fields in
// that order. The zero value is an empty object; a nil *Object reads as one.
type Object struct {
	keys []string
	vals map[string]any
}

// Get returns o[k] and whether it is there.
func (o *Object) Get(k string) (any, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.vals[k]
	return v, ok
}

// At returns o[k], nil when it is not there.
func (o *Object) At(k string) any {
	v, _ := o.Get(k)
	return v
}

// Obj returns o[k] when it is an object, else nil.
func (o *Object) Obj(k string) *Object {
	c, _ := o.At(k).(*Object)
	return c
}

// Str returns o[k] when it is a string, else "".
func (o *Object) Str(k string) string {
	s, _ := o.At(k).(string)
	return s
}

// Keys returns the keys in order; the caller must not change the slice.
func (o *Object) Keys() []string {
	if o == nil {
		return nil
	}
	return o.keys
}

// Set sets o[k]; a new key goes last.
func (o *Object) Set(k string, v any) {
	if o.vals == nil {
		o.vals = map[string]any{}
	}
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// Delete removes o[k].
func (o *Object) Delete(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, key := range o.keys {
		if key == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

// MarshalJSON writes the keys in order, <, > and & as they are.
func (o *Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.Keys() {
		if i > 0 {
			b.WriteByte(',')
		}
		for j, v := range []any{k, o.vals[k]} {
			data, err := Marshal(v)
			if err != nil {
				return nil, err
			}
			b.Write(data)
			if j == 0 {
				b.WriteByte(':')
			}
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// DecodeOrdered reads the one JSON value data holds: objects as *Object,
// numbers as json.Number. A key twice in one object is an error, and so is
// anything after the value (ErrTrailing).
func DecodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, ErrTrailing
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, json.Number, bool or nil
	}
	switch d {
	case '{':
		o := &Object{vals: map[string]any{}}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, ok := kt.(string)
			if !ok {
				return nil, fmt.Errorf("object key %v is not a string", kt)
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			if _, dup := o.vals[k]; dup {
				return nil, fmt.Errorf("duplicate key %q", k)
			}
			o.Set(k, v)
		}
		_, err := dec.Token()
		return o, err
	case '[':
		arr := []any{}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := dec.Token()
		return arr, err
	}
	return nil, fmt.Errorf("unexpected %v", d)
}

// Indent writes v as JSON indented by two spaces, *Object keys in order,
// <, > and & as they are, and a final newline.
func Indent(v any) ([]byte, error) {
	compact, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, compact, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// Pointer follows a JSON pointer (RFC 6901) from root, through *Object,
// map[string]any (a tree encoding/json made) and []any.
func Pointer(root any, ptr string) (any, bool) {
	if ptr == "" {
		return root, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	cur := root
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		var ok bool
		switch c := cur.(type) {
		case *Object:
			cur, ok = c.Get(tok)
		case map[string]any:
			cur, ok = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if ok = err == nil && i >= 0 && i < len(c); ok {
				cur = c[i]
			}
		}
		if !ok {
			return nil, false
		}
	}
	return cur, true
}
