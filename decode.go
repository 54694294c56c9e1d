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

// A number in the tree stays json.Number, its text, so the validator
// compares it exactly and a long one is no error. But the validator reads
// it as a big.Rat: one written with a 7-digit exponent, or with a million
// digits after the point, it cannot read, and panics on when the schema
// bounds it; 1e999999 it reads in 20 ms. So decodeAny refuses a number
// longer than maxNumberLen or with an exponent beyond ±maxExponent, which
// no question asks for (float64 reaches 1.8e308).
const (
	maxNumberLen = 400
	maxExponent  = 400
)

// checkNumber refuses what the validator cannot read quickly; n is a
// number token, which the decoder has checked.
func checkNumber(n string) error {
	exp := 0
	if i := strings.IndexAny(n, "eE"); i >= 0 {
		var err error
		if exp, err = strconv.Atoi(n[i+1:]); err != nil {
			exp = maxExponent + 1 // more digits than an int holds
		}
	}
	if len(n) > maxNumberLen || exp > maxExponent || exp < -maxExponent {
		const show = 20
		if len(n) > show {
			n = n[:show] + "…"
		}
		return fmt.Errorf("number %s is out of range (at most %d characters, exponent within ±%d)", n, maxNumberLen, maxExponent)
	}
	return nil
}

// numberText writes a json.Number back as the number it holds; json v2
// would write its Go type, a string.
var numberText = jsonv2.WithMarshalers(jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, n json.Number) error {
	return enc.WriteValue(jsontext.Value(n))
}))

// decodeAny reads one JSON value, numbers kept exact. It walks the tokens
// itself: json v2's Unmarshal into an any with a hook that kept numbers as
// json.Number called it, and fell back from it, at every value, which
// made a raise's arguments cost 30 µs and 95 allocations to read
// (BenchmarkDecodeAny); the walk reads them in a fraction of that. An
// object's key that is one of names (may be nil) is that string, not a
// new one: a kind's schema names the keys a raise or a submit uses.
func decodeAny(data []byte, names map[string]string) (any, error) {
	r := readers.Get().(*treeReader)
	defer func() {
		r.src.Reset(nil) // the pool keeps no input
		readers.Put(r)
	}()
	r.src.Reset(data)
	r.dec.Reset(&r.src)
	v, err := readTree(&r.dec, names)
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
func readTree(dec *jsontext.Decoder, names map[string]string) (any, error) {
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
		n := tok.String()
		if err := checkNumber(n); err != nil {
			return nil, fmt.Errorf("%w at offset %d", err, dec.InputOffset()-int64(len(n)))
		}
		return json.Number(n), nil
	case '{':
		obj := map[string]any{}
		for dec.PeekKind() != '}' {
			key, err := dec.ReadValue()
			if err != nil {
				return nil, err
			}
			name := keyName(key, names)
			if obj[name], err = readTree(dec, names); err != nil {
				return nil, err
			}
		}
		_, err := dec.ReadToken()
		return obj, err
	case '[':
		// Items are gathered on the stack and the array made once, at
		// its length, rather than grown.
		var first [8]any
		items := first[:0]
		for dec.PeekKind() != ']' {
			v, err := readTree(dec, names)
			if err != nil {
				return nil, err
			}
			items = append(items, v)
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		arr := make([]any, len(items)) // never nil: [] is not null
		copy(arr, items)
		return arr, nil
	}
	return nil, fmt.Errorf("unexpected %v", tok.Kind())
}

// keyName is the name a key's JSON string holds: names' copy when it has
// one. The decoder has checked the string.
func keyName(key jsontext.Value, names map[string]string) string {
	text := key[1 : len(key)-1]
	if bytes.IndexByte(text, '\\') >= 0 {
		unquoted, _ := jsontext.AppendUnquote(nil, key)
		text = unquoted
	}
	if name, ok := names[string(text)]; ok {
		return name
	}
	return string(text)
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
