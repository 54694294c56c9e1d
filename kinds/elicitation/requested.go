package elicitation

import (
	"fmt"
	"slices"

	"github.com/kindkit/kindkit"
)

// The keywords MCP allows in a requested schema (form mode): an object of
// top-level properties, each a string, a number, a boolean, a single-select
// enum or a multi-select array of enum values.
var (
	rootKeys   = []string{"$schema", "type", "properties", "required", "title", "description"}
	commonKeys = []string{"type", "title", "description", "default"}
	typeKeys   = map[string][]string{
		"string":  {"minLength", "maxLength", "format", "enum", "enumNames", "oneOf"},
		"number":  {"minimum", "maximum"},
		"integer": {"minimum", "maximum"},
		"boolean": {},
		"array":   {"items", "minItems", "maxItems"},
	}
	formats = []string{"email", "uri", "date", "date-time"}
)

// checkRequested reports what in a requested schema MCP does not allow:
// nesting, references, and keywords outside its subset.
func checkRequested(s map[string]any) []kindkit.FieldError {
	var errs []kindkit.FieldError
	fail := func(at, format string, args ...any) {
		errs = append(errs, kindkit.FieldError{Field: "requestedSchema", Message: at + ": " + fmt.Sprintf(format, args...)})
	}
	for k := range s {
		if !slices.Contains(rootKeys, k) {
			fail(k, "not allowed in a requested schema (want type, properties, required)")
		}
	}
	if s["type"] != "object" {
		fail("type", `must be "object"`)
	}
	props, ok := s["properties"].(map[string]any)
	if !ok {
		fail("properties", "must be an object of property schemas")
	}
	for name, raw := range props {
		if name == "" {
			fail("properties", "a property needs a name") // errors name the field by it
			continue
		}
		p, ok := raw.(map[string]any)
		if !ok {
			fail("properties/"+name, "must be a schema object")
			continue
		}
		checkProperty("properties/"+name, p, fail)
	}
	if req, present := s["required"]; present {
		list, ok := req.([]any)
		if !ok {
			fail("required", "must be a list of property names")
		}
		for _, r := range list {
			if name, ok := r.(string); !ok || props[name] == nil {
				fail("required", "%v is not one of the properties", r)
			}
		}
	}
	return errs
}

func checkProperty(at string, p map[string]any, fail func(at, format string, args ...any)) {
	typ, _ := p["type"].(string)
	allowed, ok := typeKeys[typ]
	if !ok {
		fail(at, `type must be "string", "number", "integer", "boolean" or "array"`)
		return
	}
	for k := range p {
		if !slices.Contains(commonKeys, k) && !slices.Contains(allowed, k) {
			fail(at+"/"+k, "not allowed for a %s property", typ)
		}
	}
	if f, present := p["format"]; present && !slices.Contains(formats, fmt.Sprint(f)) {
		fail(at+"/format", "must be email, uri, date or date-time")
	}
	if enum, present := p["enum"]; present {
		checkStrings(at+"/enum", enum, fail)
		if names, present := p["enumNames"]; present {
			checkStrings(at+"/enumNames", names, fail)
		}
	}
	if opts, present := p["oneOf"]; present {
		checkTitled(at+"/oneOf", opts, fail)
	}
	if typ == "array" {
		items, ok := p["items"].(map[string]any)
		if !ok {
			fail(at+"/items", "must be a schema of the values to pick from")
			return
		}
		switch {
		case items["enum"] != nil:
			for k := range items {
				if k != "type" && k != "enum" {
					fail(at+"/items/"+k, "not allowed in a multi-select's items")
				}
			}
			if t, ok := items["type"]; ok && t != "string" {
				fail(at+"/items/type", `must be "string"`)
			}
			checkStrings(at+"/items/enum", items["enum"], fail)
		case items["anyOf"] != nil:
			for k := range items {
				if k != "anyOf" && k != "type" {
					fail(at+"/items/"+k, "not allowed in a multi-select's items")
				}
			}
			checkTitled(at+"/items/anyOf", items["anyOf"], fail)
		default:
			fail(at+"/items", "a multi-select's items must have enum or anyOf")
		}
	}
}

// checkStrings wants a non-empty list of strings.
func checkStrings(at string, v any, fail func(at, format string, args ...any)) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		fail(at, "must be a non-empty list of strings")
		return
	}
	for _, s := range list {
		if _, ok := s.(string); !ok {
			fail(at, "must be a non-empty list of strings")
			return
		}
	}
}

// checkTitled wants a non-empty list of {const, title} options.
func checkTitled(at string, v any, fail func(at, format string, args ...any)) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		fail(at, "must be a non-empty list of {const, title} options")
		return
	}
	for _, o := range list {
		opt, ok := o.(map[string]any)
		_, isString := opt["const"].(string)
		if !ok || !isString {
			fail(at, "each option must be {const: <string>, title: <string>}")
			return
		}
		for k := range opt {
			if k != "const" && k != "title" {
				fail(at, "each option must be {const: <string>, title: <string>}")
				return
			}
		}
	}
}
