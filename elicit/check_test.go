package elicit_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kindkit/kindkit/elicit"
)

func TestCheckRequestedSchema(t *testing.T) {
	good := []string{
		`{"type": "object", "properties": {}}`,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {
			"name": {"type": "string", "title": "Name", "description": "d", "minLength": 1, "maxLength": 40, "default": "Ann"},
			"email": {"type": "string", "format": "email"},
			"site": {"type": "string", "format": "uri"},
			"day": {"type": "string", "format": "date"},
			"at": {"type": "string", "format": "date-time"},
			"n": {"type": "number", "minimum": 0.5, "maximum": 9.5, "default": 1},
			"i": {"type": "integer", "minimum": 1, "maximum": 5},
			"ok": {"type": "boolean", "default": false},
			"plan": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"], "default": "a"},
			"tier": {"type": "string", "oneOf": [{"const": "x", "title": "X"}], "default": "x"},
			"tags": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string", "enum": ["p", "q"]}, "default": ["p"]},
			"picks": {"type": "array", "items": {"anyOf": [{"const": "p", "title": "P"}]}}
		}, "required": ["name", "ok"]}`,
	}
	for _, s := range good {
		if err := elicit.CheckRequestedSchema(s); err != nil {
			t.Errorf("%s:\n%v", s, err)
		}
	}
	bad := map[string]struct{ schema, want string }{
		"not an object":   {`[]`, "/: a requested schema is a JSON object"},
		"not JSON":        {`{`, "/: not JSON: unexpected end of JSON input"},
		"root type":       {`{"type": "array", "properties": {}}`, `/type: must be "object"`},
		"no properties":   {`{"type": "object"}`, "/properties: must be an object of properties"},
		"root keyword":    {`{"type": "object", "properties": {}, "additionalProperties": false}`, "/additionalProperties: is not allowed here (allowed: $schema, type, properties, required)"},
		"nested":          {`{"type": "object", "properties": {"a": {"type": "object", "properties": {}}}}`, "/properties/a/type: must be string, number, integer, boolean or array (got object)"},
		"format":          {`{"type": "object", "properties": {"a": {"type": "string", "format": "time"}}}`, "/properties/a/format: must be one of email, uri, date, date-time"},
		"pattern":         {`{"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}}`, "/properties/a/pattern: is not allowed here (allowed: type, title, description, minLength, maxLength, format, default)"},
		"lengths":         {`{"type": "object", "properties": {"a": {"type": "string", "minLength": 3, "maxLength": 2}}}`, "/properties/a/maxLength: is less than minLength"},
		"bounds":          {`{"type": "object", "properties": {"a": {"type": "integer", "minimum": 3, "maximum": 2.5}}}`, "/properties/a/maximum: must be a number (a whole one)"},
		"enum of numbers": {`{"type": "object", "properties": {"a": {"type": "string", "enum": [1]}}}`, "/properties/a/enum/0: must be a string"},
		"enumNames":       {`{"type": "object", "properties": {"a": {"type": "string", "enum": ["x", "y"], "enumNames": ["X"]}}}`, "/properties/a/enumNames: must name each of the 2 enum values"},
		"empty const":     {`{"type": "object", "properties": {"a": {"type": "string", "oneOf": [{"const": "", "title": "T"}]}}}`, "/properties/a/oneOf/0/const: must be a non-empty string"},
		"untitled":        {`{"type": "object", "properties": {"a": {"type": "array", "items": {"anyOf": [{"const": "x"}]}}}}`, "/properties/a/items/anyOf/0/title: must be a non-empty string"},
		"array of text":   {`{"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}}`, "/properties/a/items/enum: must be a non-empty list of strings"},
		"bad default":     {`{"type": "object", "properties": {"a": {"type": "string", "enum": ["x"], "default": "y"}}}`, "/properties/a/default: is not one of the picks"},
		"required":        {`{"type": "object", "properties": {"a": {"type": "boolean"}}, "required": ["a", "b", "a"]}`, "/required/1: names \"b\", which is not a property\n/required/2: names \"a\" twice"},
		"no type":         {`{"type": "object", "properties": {"a": {"title": "A"}}}`, "/properties/a/type: must be string, number, integer, boolean or array (got <nil>)"},
	}
	for name, c := range bad {
		t.Run(name, func(t *testing.T) {
			err := elicit.CheckRequestedSchema(c.schema)
			if err == nil {
				t.Fatal("accepted")
			}
			if diff := cmp.Diff(c.want, err.Error()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzCheckRequestedSchema: any JSON from an MCP server is checked without
// a panic, and a schema that passes is an object of properties.
func FuzzCheckRequestedSchema(f *testing.F) {
	f.Add(`{"type": "object", "properties": {"a": {"type": "string", "enum": ["x"]}}, "required": ["a"]}`)
	f.Add(`{"type": "object", "properties": {"a": {"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]}, "default": ["x", 1]}}}`)
	f.Add(`{"type": "object", "properties": {"a": {"type": "number", "minimum": "1"}}, "required": [1]}`)
	f.Fuzz(func(t *testing.T, schema string) {
		if err := elicit.CheckRequestedSchema(schema); err == nil && !strings.Contains(schema, "properties") {
			t.Errorf("accepted a schema without properties: %s", schema)
		}
	})
}
