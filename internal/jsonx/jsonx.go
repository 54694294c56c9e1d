// Package jsonx holds the JSON helpers the module's tools and pages
// share: reading a document that must hold exactly one value, writing
// without HTML escaping, and objects that keep their keys in order
// (ordered.go) with the JSON pointers that walk them. The root package kindkit imports no other package
// of the module, so it keeps its own: json v2 for what comes from outside
// (decode.go), and marshalString for its wire strings.
package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// ErrTrailing is the error of data that holds more than one JSON value.
var ErrTrailing = errors.New("data after the top-level value")

// Decode reads the one JSON value data holds into v. A number read into an
// interface stays json.Number, so that it compares by value and re-encodes
// unchanged; an object member that no field of a struct names is an error,
// since in the module's own files it is a misspelling; anything but white
// space after the value is ErrTrailing.
func Decode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return ErrTrailing
	}
	return nil
}

// Marshal encodes v compactly, leaving <, > and & as they are where
// encoding/json would escape them for HTML.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
