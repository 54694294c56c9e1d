package elicit

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// CheckRequestedSchema reports every way schema breaks MCP's rules for an
// elicitation form's requestedSchema (the 2025-11-25 schema's
// ElicitRequestFormParams): an object whose properties are each a string
// (title, description, minLength, maxLength, format email|uri|date|date-time,
// default), a number or integer (minimum, maximum, default), a boolean
// (default), a single-select enum (a string with enum, legacy enumNames, or
// oneOf [{const, title}]), or a multi-select array (minItems, maxItems, and
// items {type: string, enum} or {anyOf: [{const, title}]}); required names
// properties. Anything else, a nested object or an unknown keyword among
// them, is a problem: the check is strict, so a form that passes it is one
// every client can draw.
//
// schema is JSON (json.RawMessage, []byte, string) or what encoding/json
// decodes JSON into. The error lists one problem a line, each at its JSON
// pointer, in pointer order.
func CheckRequestedSchema(schema any) error {
	var root any
	switch s := schema.(type) {
	case json.RawMessage:
		schema = []byte(s)
	case string:
		schema = []byte(s)
	}
	if data, ok := schema.([]byte); ok {
		if err := json.Unmarshal(data, &root); err != nil {
			return fmt.Errorf("/: not JSON: %w", err)
		}
	} else {
		data, err := json.Marshal(schema)
		if err != nil {
			return fmt.Errorf("/: %w", err)
		}
		if err := json.Unmarshal(data, &root); err != nil {
			return fmt.Errorf("/: %w", err)
		}
	}
	c := &checker{}
	c.root(root)
	if len(c.problems) == 0 {
		return nil
	}
	sort.SliceStable(c.problems, func(i, j int) bool { return c.problems[i].ptr < c.problems[j].ptr })
	errs := make([]error, len(c.problems))
	for i, p := range c.problems {
		errs[i] = errors.New(p.ptr + ": " + p.msg)
	}
	return errors.Join(errs...)
}

type problem struct{ ptr, msg string }

type checker struct{ problems []problem }

func (c *checker) add(ptr, format string, args ...any) {
	c.problems = append(c.problems, problem{ptr, fmt.Sprintf(format, args...)})
}

func (c *checker) root(v any) {
	m, ok := v.(map[string]any)
	if !ok {
		c.add("/", "a requested schema is a JSON object")
		return
	}
	c.keys("", m, "$schema", "type", "properties", "required")
	if m["type"] != "object" {
		c.add("/type", `must be "object"`)
	}
	props, ok := m["properties"].(map[string]any)
	if !ok {
		c.add("/properties", "must be an object of properties")
	}
	for name, p := range props {
		if name == "" {
			c.add("/properties/", "a property needs a name: answers are named by it")
			continue
		}
		c.property("/properties/"+escape(name), p)
	}
	if r, present := m["required"]; present {
		list, ok := r.([]any)
		if !ok {
			c.add("/required", "must be a list of property names")
		}
		seen := map[string]bool{}
		for i, e := range list {
			name, ok := e.(string)
			ptr := fmt.Sprintf("/required/%d", i)
			switch _, known := props[name]; {
			case !ok:
				c.add(ptr, "must be a string")
			case !known:
				c.add(ptr, "names %q, which is not a property", name)
			case seen[name]:
				c.add(ptr, "names %q twice", name)
			}
			seen[name] = true
		}
	}
	if s, present := m["$schema"]; present {
		if _, ok := s.(string); !ok {
			c.add("/$schema", "must be a string")
		}
	}
}

var formats = []string{"email", "uri", "date", "date-time"}

func (c *checker) property(ptr string, v any) {
	p, ok := v.(map[string]any)
	if !ok {
		c.add(ptr, "a property is a JSON object")
		return
	}
	for _, k := range []string{"title", "description"} {
		if s, present := p[k]; present {
			if _, ok := s.(string); !ok {
				c.add(ptr+"/"+k, "must be a string")
			}
		}
	}
	switch t := p["type"]; t {
	case "string":
		switch {
		case p["enum"] != nil:
			c.keys(ptr, p, "type", "title", "description", "enum", "enumNames", "default")
			enum := c.strings(ptr+"/enum", p["enum"], true)
			if names, present := p["enumNames"]; present {
				if n := c.strings(ptr+"/enumNames", names, false); len(n) != len(enum) {
					c.add(ptr+"/enumNames", "must name each of the %d enum values", len(enum))
				}
			}
			c.defaultIn(ptr, p, enum)
		case p["oneOf"] != nil:
			c.keys(ptr, p, "type", "title", "description", "oneOf", "default")
			c.defaultIn(ptr, p, c.titled(ptr+"/oneOf", p["oneOf"]))
		default:
			c.keys(ptr, p, "type", "title", "description", "minLength", "maxLength", "format", "default")
			lo, hasLo := c.count(ptr+"/minLength", p, "minLength")
			hi, hasHi := c.count(ptr+"/maxLength", p, "maxLength")
			if hasLo && hasHi && hi < lo {
				c.add(ptr+"/maxLength", "is less than minLength")
			}
			if f, present := p["format"]; present && !slices.Contains(formats, fmt.Sprint(f)) {
				c.add(ptr+"/format", "must be one of %s", strings.Join(formats, ", "))
			}
			if d, present := p["default"]; present {
				if _, ok := d.(string); !ok {
					c.add(ptr+"/default", "must be a string")
				}
			}
		}
	case "number", "integer":
		c.keys(ptr, p, "type", "title", "description", "minimum", "maximum", "default")
		lo, hasLo := c.number(ptr+"/minimum", p, "minimum", t == "integer")
		hi, hasHi := c.number(ptr+"/maximum", p, "maximum", t == "integer")
		if hasLo && hasHi && hi < lo {
			c.add(ptr+"/maximum", "is less than minimum")
		}
		c.number(ptr+"/default", p, "default", t == "integer")
	case "boolean":
		c.keys(ptr, p, "type", "title", "description", "default")
		if d, present := p["default"]; present {
			if _, ok := d.(bool); !ok {
				c.add(ptr+"/default", "must be true or false")
			}
		}
	case "array":
		c.keys(ptr, p, "type", "title", "description", "minItems", "maxItems", "items", "default")
		lo, hasLo := c.count(ptr+"/minItems", p, "minItems")
		hi, hasHi := c.count(ptr+"/maxItems", p, "maxItems")
		if hasLo && hasHi && hi < lo {
			c.add(ptr+"/maxItems", "is less than minItems")
		}
		items, ok := p["items"].(map[string]any)
		var picks []string
		switch {
		case !ok:
			c.add(ptr+"/items", "a multi-select needs items: {type: string, enum} or {anyOf: [{const, title}]}")
		case items["anyOf"] != nil:
			c.keys(ptr+"/items", items, "anyOf")
			picks = c.titled(ptr+"/items/anyOf", items["anyOf"])
		default:
			c.keys(ptr+"/items", items, "type", "enum")
			if items["type"] != "string" {
				c.add(ptr+"/items/type", `must be "string"`)
			}
			picks = c.strings(ptr+"/items/enum", items["enum"], true)
		}
		if d, present := p["default"]; present {
			list, ok := d.([]any)
			if !ok {
				c.add(ptr+"/default", "must be a list of picks")
			}
			for i, e := range list {
				if s, ok := e.(string); !ok || !slices.Contains(picks, s) {
					c.add(fmt.Sprintf("%s/default/%d", ptr, i), "is not one of the picks")
				}
			}
		}
	default:
		c.add(ptr+"/type", "must be string, number, integer, boolean or array (got %v)", t)
	}
}

// keys reports the keywords of m that are not allowed.
func (c *checker) keys(ptr string, m map[string]any, allowed ...string) {
	for k := range m {
		if !slices.Contains(allowed, k) {
			c.add(ptr+"/"+escape(k), "is not allowed here (allowed: %s)", strings.Join(allowed, ", "))
		}
	}
}

// strings checks a list of strings, non-empty when nonEmpty.
func (c *checker) strings(ptr string, v any, nonEmpty bool) []string {
	list, ok := v.([]any)
	if !ok || (nonEmpty && len(list) == 0) {
		c.add(ptr, "must be a non-empty list of strings")
		return nil
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			c.add(fmt.Sprintf("%s/%d", ptr, i), "must be a string")
			continue
		}
		out = append(out, s)
	}
	return out
}

// titled checks a titled enum's entries and returns their values.
func (c *checker) titled(ptr string, v any) []string {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		c.add(ptr, "must be a non-empty list of {const, title}")
		return nil
	}
	var out []string
	for i, e := range list {
		ep := fmt.Sprintf("%s/%d", ptr, i)
		m, ok := e.(map[string]any)
		if !ok {
			c.add(ep, "must be {const, title}")
			continue
		}
		c.keys(ep, m, "const", "title")
		if s, ok := m["const"].(string); !ok || s == "" {
			c.add(ep+"/const", "must be a non-empty string")
		} else {
			out = append(out, s)
		}
		if s, ok := m["title"].(string); !ok || s == "" {
			c.add(ep+"/title", "must be a non-empty string")
		}
	}
	return out
}

func (c *checker) defaultIn(ptr string, p map[string]any, picks []string) {
	if d, present := p["default"]; present {
		if s, ok := d.(string); !ok || !slices.Contains(picks, s) {
			c.add(ptr+"/default", "is not one of the picks")
		}
	}
}

func (c *checker) number(ptr string, p map[string]any, k string, integer bool) (float64, bool) {
	v, present := p[k]
	if !present {
		return 0, false
	}
	n, ok := v.(float64)
	if !ok || (integer && n != math.Trunc(n)) {
		c.add(ptr, "must be a number%s", map[bool]string{true: " (a whole one)"}[integer])
		return 0, false
	}
	return n, true
}

func (c *checker) count(ptr string, p map[string]any, k string) (float64, bool) {
	n, ok := c.number(ptr, p, k, true)
	if ok && n < 0 {
		c.add(ptr, "must not be negative")
	}
	return n, ok
}

func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}
