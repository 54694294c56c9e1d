package kindgen

import (
	"fmt"
	"slices"
)

// elicitationSchema derives gen/<kind>/elicitation.json: the kind's Values
// as an MCP elicitation form, whose requestedSchema may hold only flat,
// primitive properties (a string, a number or integer, a boolean, a
// single-select enum, or a multi-select array of an enum).
//
// What does not depend on the spec is done here: each property of Values
// becomes one of MCP's shapes, with the page's static hints applied (label →
// title, help or else description → description, labels → a titled enum).
// What does depend on it (bounds from bind, picks from options, a field
// shown by showIf, an array asked as a single pick by multiIf, and one group
// of properties per element of a spec list by each) is kept as written,
// under x-ui, for package elicit to fill in from the spec at run time. The
// root's x-ui text (the spec's question texts) is kept for the message.
//
// A Values that cannot be flattened (a free-form object, a nested object, an
// array of anything but an enum) is not an error: the kind generates, and
// the file holds only {"x-not-elicitable": "<file>: <pointer>: <why>"}, which elicit reports
// when asked to use it. A hint that is wrong (each on a property that is not
// an array of objects, multiIf on a property that is not an array) is an
// error, as any wrong schema is.
func elicitationSchema(s *Schema) (any, error) {
	in := &inliner{s: s, what: "Values is recursive; a form cannot be drawn from it", drop: func(k string) bool {
		return len(k) > 0 && k[0] == '$'
	}}
	v, err := in.inline(in.def("Values"), "/$defs/Values", nil)
	if err != nil {
		return nil, err
	}
	d := &flattener{s: s}
	out, reason, err := d.root(v, "/$defs/Values")
	if err != nil {
		return nil, err
	}
	if reason != "" {
		marker := &object{}
		marker.set("x-not-elicitable", s.Path+": "+reason)
		return marker, nil
	}
	return out, nil
}

type flattener struct{ s *Schema }

// mcpFormats are the string formats an elicitation form may name.
var mcpFormats = []string{"email", "uri", "date", "date-time"}

// specHints are the x-ui hints whose meaning depends on the spec: kept in
// elicitation.json for the run time.
var specHints = []string{"bind", "showIf", "options", "multiIf"}

// bindable are the keywords bind may fill in an elicitation form, and the
// scale's end labels (worded into the description).
var bindable = []string{"title", "description", "default", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "minLabel", "maxLabel"}

func (d *flattener) fail(ptr, format string, args ...any) error {
	return &SchemaError{Path: d.s.Path, Pointer: ptr, Message: fmt.Sprintf(format, args...)}
}

// root flattens Values: reason says why it cannot be, or out is the form.
func (d *flattener) root(v any, ptr string) (out *object, reason string, err error) {
	node, _ := v.(*object)
	props := objectAt(node, "properties")
	if node == nil || str(node, "type") != "object" || props == nil || len(props.keys) == 0 {
		return nil, ptr + ": Values is not an object with properties (a free-form object cannot be asked as MCP's flat form)", nil
	}
	out = &object{}
	out.set("type", "object")
	outProps := &object{}
	for _, name := range props.keys {
		pp := ptr + "/properties/" + escape(name)
		p, _ := props.vals[name].(*object)
		if p == nil {
			return nil, pp + ": not a schema object", nil
		}
		var c *object
		if ui := objectAt(p, "x-ui"); ui != nil && ui.vals["each"] != nil {
			c, reason, err = d.group(p, pp)
		} else {
			c, reason, err = d.leaf(p, pp)
		}
		if err != nil || reason != "" {
			return nil, reason, err
		}
		outProps.set(name, c)
	}
	out.set("properties", outProps)
	if req := required(node, props, ""); len(req) > 0 {
		out.set("required", req)
	}
	if ui := objectAt(node, "x-ui"); ui != nil {
		hints := &object{}
		for _, k := range []string{"text", "fields"} {
			if v, ok := ui.vals[k]; ok {
				hints.set(k, v)
			}
		}
		if len(hints.keys) > 0 {
			out.set("x-ui", hints)
		}
	}
	return out, "", nil
}

// required lists node's required properties that the form asks, skipping
// skip (a group's key, filled from the spec) and group properties (always
// filled by the mapping).
func required(node, props *object, skip string) []any {
	list, _ := node.vals["required"].([]any)
	var out []any
	for _, r := range list {
		name, _ := r.(string)
		p, _ := props.vals[name].(*object)
		if name == skip || p == nil {
			continue
		}
		if ui := objectAt(p, "x-ui"); ui != nil && ui.vals["each"] != nil {
			continue
		}
		out = append(out, name)
	}
	return out
}

// group flattens a property with an each hint: an array of objects with one
// element per element of a spec list, matched by a key property.
func (d *flattener) group(p *object, ptr string) (*object, string, error) {
	each := objectAt(objectAt(p, "x-ui"), "each")
	items := objectAt(p, "items")
	props := objectAt(items, "properties")
	if each == nil || str(p, "type") != "array" || props == nil {
		return nil, "", d.fail(ptr+"/x-ui/each", "each needs an object {from, key} on an array of objects with properties")
	}
	from, key := str(each, "from"), str(each, "key")
	if from == "" || key == "" {
		return nil, "", d.fail(ptr+"/x-ui/each", "each needs from (a pointer to a list in the spec) and key (the property that names its element)")
	}
	if k := objectAt(props, key); k == nil || str(k, "type") != "string" {
		return nil, "", d.fail(ptr+"/x-ui/each/key", "%q is not a string property of the items", key)
	}
	out := &object{}
	hint := &object{}
	hint.set("each", each)
	out.set("x-ui", hint)
	outProps := &object{}
	for _, name := range props.keys {
		if name == key {
			continue
		}
		pp := ptr + "/items/properties/" + escape(name)
		c, _ := props.vals[name].(*object)
		if c == nil {
			return nil, pp + ": not a schema object", nil
		}
		leaf, reason, err := d.leaf(c, pp)
		if err != nil || reason != "" {
			return nil, reason, err
		}
		outProps.set(name, leaf)
	}
	out.set("properties", outProps)
	if req := required(items, props, key); len(req) > 0 {
		out.set("required", req)
	}
	return out, "", nil
}

// leaf flattens one property into one of MCP's primitive shapes.
func (d *flattener) leaf(p *object, ptr string) (*object, string, error) {
	for _, k := range []string{"oneOf", "anyOf", "allOf", "not", "if", "properties", "patternProperties"} {
		if _, ok := p.vals[k]; ok {
			return nil, fmt.Sprintf("%s: %s cannot be asked as a primitive form field", ptr, k), nil
		}
	}
	ui := objectAt(p, "x-ui")
	typ := str(p, "type")
	if typ == "" && p.vals["enum"] != nil {
		typ = "string"
	}
	out := &object{}
	out.set("type", typ)
	if l := str(ui, "label"); l != "" {
		out.set("title", l)
	}
	if h := str(ui, "help"); h != "" {
		out.set("description", h) // descriptions are the model's; a person reads help
	}
	copyKeys := func(keys ...string) {
		for _, k := range keys {
			if v, ok := p.vals[k]; ok {
				out.set(k, v)
			}
		}
	}
	dynamic := ui != nil && ui.vals["options"] != nil
	switch typ {
	case "string":
		if p.vals["enum"] != nil {
			enum, ok := stringEnum(p)
			if !ok {
				return nil, ptr + "/enum: an elicitation enum holds strings only", nil
			}
			setEnum(out, enum, objectAt(ui, "labels"), "oneOf")
		} else if !dynamic {
			copyKeys("minLength", "maxLength")
			if f := str(p, "format"); slices.Contains(mcpFormats, f) {
				out.set("format", f)
			}
		}
		copyKeys("default")
	case "number", "integer":
		copyKeys("minimum", "maximum", "default")
	case "boolean":
		copyKeys("default")
	case "array":
		items := objectAt(p, "items")
		switch {
		case items != nil && items.vals["enum"] != nil:
			enum, ok := stringEnum(items)
			if !ok {
				return nil, ptr + "/items/enum: an elicitation enum holds strings only", nil
			}
			it := &object{}
			setEnum(it, enum, objectAt(ui, "labels"), "anyOf")
			out.set("items", it)
		case dynamic && items != nil && str(items, "type") == "string":
		default:
			return nil, ptr + ": an array is asked only as a multi-select: its items an enum of strings, or strings picked from the spec (x-ui options)", nil
		}
		copyKeys("minItems", "maxItems", "default")
	default:
		return nil, fmt.Sprintf("%s: type %v cannot be asked as a primitive form field (string, number, integer, boolean, or an array of an enum)", ptr, p.vals["type"]), nil
	}
	if ui == nil {
		return out, "", nil
	}
	if ui.vals["multiIf"] != nil && typ != "array" {
		return nil, "", d.fail(ptr+"/x-ui/multiIf", "multiIf asks an array as one pick when false; this property is not an array")
	}
	if bind := objectAt(ui, "bind"); bind != nil {
		for _, k := range bind.keys {
			if !slices.Contains(bindable, k) {
				return nil, "", d.fail(ptr+"/x-ui/bind/"+escape(k), "an elicitation form cannot bind %q (bindable: %v)", k, bindable)
			}
		}
	}
	hints := &object{}
	for _, k := range specHints {
		if v, ok := ui.vals[k]; ok {
			hints.set(k, v)
		}
	}
	if len(hints.keys) > 0 {
		out.set("x-ui", hints)
	}
	return out, "", nil
}

// setEnum writes enum into node as MCP writes an enum: titled ({const,
// title} entries under key) when the page has labels for it, else plain.
func setEnum(node *object, enum []string, labels *object, key string) {
	if labels == nil {
		if key == "anyOf" {
			node.set("type", "string")
		}
		vals := make([]any, len(enum))
		for i, e := range enum {
			vals[i] = e
		}
		node.set("enum", vals)
		return
	}
	entries := make([]any, len(enum))
	for i, e := range enum {
		entry := &object{}
		entry.set("const", e)
		title := str(labels, e)
		if title == "" {
			title = e
		}
		entry.set("title", title)
		entries[i] = entry
	}
	node.set(key, entries)
}

func stringEnum(p *object) ([]string, bool) {
	list, _ := p.vals["enum"].([]any)
	out := make([]string, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok || s == "" {
			return nil, false
		}
		out[i] = s
	}
	return out, len(out) > 0
}

func objectAt(o *object, key string) *object {
	if o == nil {
		return nil
	}
	v, _ := o.vals[key].(*object)
	return v
}

func str(o *object, key string) string {
	if o == nil {
		return ""
	}
	s, _ := o.vals[key].(string)
	return s
}
