package kindkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// A submit's values and a raise's arguments are read with json v2
// (github.com/go-json-experiment/json, encoding/json/v2 from Go 1.27 on),
// which refuses what encoding/json lets through: an object that repeats a
// key (encoding/json keeps the last value, or merges the values into a
// struct, so which answer was meant is a guess), invalid UTF-8, and data
// after the value. decodeAny reads the bytes once into the generic tree the
// schema validator walks; decodeTyped reads the checked tree, as the rules'
// Normalize methods may have rewritten it, into the kind's struct.

// exactNumbers keeps a number in the generic tree as json.Number, its text,
// so the validator compares it exactly and a huge one is no error.
var exactNumbers = jsonv2.WithUnmarshalers(jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *any) error {
	if dec.PeekKind() != '0' {
		return errors.ErrUnsupported // the default: maps, slices, strings, bools, nil
	}
	val, err := dec.ReadValue()
	if err != nil {
		return err
	}
	*v = json.Number(val)
	return nil
}))

// numberText writes a json.Number back as the number it holds; json v2
// would write its Go type, a string.
var numberText = jsonv2.WithMarshalers(jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, n json.Number) error {
	return enc.WriteValue(jsontext.Value(n))
}))

// decodeAny reads one JSON value, numbers kept exact. It walks the tokens
// itself: json v2's Unmarshal into an any with exactNumbers called the
// number hook, and fell back from it, at every value of the tree, which
// made a raise's arguments cost 30 µs and 95 allocations to read
// (BenchmarkDecodeAny); the walk reads them in a fraction of that.
func decodeAny(data []byte) (any, error) {
	r := readers.Get().(*treeReader)
	defer func() {
		r.src.Reset(nil) // the pool keeps no input
		readers.Put(r)
	}()
	r.src.Reset(data)
	r.dec.Reset(&r.src)
	v, err := readTree(&r.dec)
	if err == io.EOF {
		return nil, fmt.Errorf("unexpected end of JSON input at offset %d", r.dec.InputOffset())
	}
	if err != nil {
		return nil, syntaxError(err)
	}
	if r.dec.PeekKind() != 0 {
		// A stream of values to the decoder; one value too many here.
		at := int(r.dec.InputOffset())
		for at < len(data) && strings.IndexByte(" \t\r\n", data[at]) >= 0 {
			at++
		}
		c, _ := utf8.DecodeRune(data[at:])
		return nil, fmt.Errorf("invalid character %s after top-level value at offset %d", strconv.QuoteRune(c), at)
	}
	if _, err := r.dec.ReadToken(); err != io.EOF {
		return nil, syntaxError(err) // what PeekKind stopped at
	}
	return v, nil
}

// A treeReader is decodeAny's decoder, kept for the next call: a new one
// allocates its buffers.
type treeReader struct {
	src bytes.Reader
	dec jsontext.Decoder
}

var readers = sync.Pool{New: func() any { return new(treeReader) }}

// readTree reads the next value of dec into maps, slices, strings, bools,
// nil and json.Number. The decoder refuses repeated keys, invalid UTF-8
// and bad syntax.
func readTree(dec *jsontext.Decoder) (any, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case 'n':
		return nil, nil
	case 't', 'f':
		return tok.Bool(), nil
	case '"':
		return tok.String(), nil
	case '0':
		return json.Number(tok.String()), nil
	case '{':
		obj := map[string]any{}
		for dec.PeekKind() != '}' {
			key, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			name := key.String()
			if obj[name], err = readTree(dec); err != nil {
				return nil, err
			}
		}
		_, err := dec.ReadToken()
		return obj, err
	case '[':
		arr := []any{}
		for dec.PeekKind() != ']' {
			v, err := readTree(dec)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := dec.ReadToken()
		return arr, err
	}
	return nil, fmt.Errorf("unexpected %v", tok.Kind())
}

// decodeTyped converts a schema-valid generic tree into its struct.
func decodeTyped[T any](tree any) (*T, error) {
	data, err := jsonv2.Marshal(tree, numberText)
	if err != nil {
		return nil, err
	}
	var t T
	if err := jsonv2.Unmarshal(data, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// syntaxError words a syntax error for the person or model that sent the
// JSON: what is wrong and at which byte, a repeated key by name.
func syntaxError(err error) error {
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) {
		return err
	}
	msg := se.Err.Error()
	switch {
	case errors.Is(se.Err, jsontext.ErrDuplicateName):
		msg = fmt.Sprintf("duplicate key %q", shortKey(se.JSONPointer.LastToken()))
	case errors.Is(se.Err, io.ErrUnexpectedEOF):
		msg = "unexpected end of JSON input"
	}
	return fmt.Errorf("%s at offset %d", msg, se.ByteOffset)
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
