package kindgen

import (
	"fmt"
	"slices"
)

// elicitationSchema derives gen/<kind>gen/elicitation.json: the kind's Values
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
		marker.Set("x-not-elicitable", s.Path+": "+reason)
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
	props := node.Obj("properties")
	if node == nil || node.Str("type") != "object" || props == nil || len(props.Keys()) == 0 {
		return nil, ptr + ": Values is not an object with properties (a free-form object cannot be asked as MCP's flat form)", nil
	}
	out = &object{}
	out.Set("type", "object")
	outProps := &object{}
	for _, name := range props.Keys() {
		pp := ptr + "/properties/" + escape(name)
		p, _ := props.At(name).(*object)
		if p == nil {
			return nil, pp + ": not a schema object", nil
		}
		var c *object
		if ui := p.Obj("x-ui"); ui != nil && ui.At("each") != nil {
			c, reason, err = d.group(p, pp)
		} else {
			c, reason, err = d.leaf(p, pp)
		}
		if err != nil || reason != "" {
			return nil, reason, err
		}
		outProps.Set(name, c)
	}
	out.Set("properties", outProps)
	if req := required(node, props, ""); len(req) > 0 {
		out.Set("required", req)
	}
	if ui := node.Obj("x-ui"); ui != nil {
		hints := &object{}
		for _, k := range []string{"text", "fields"} {
			if v, ok := ui.Get(k); ok {
				hints.Set(k, v)
			}
		}
		if len(hints.Keys()) > 0 {
			out.Set("x-ui", hints)
		}
	}
	return out, "", nil
}

// required lists node's required properties that the form asks, skipping
// skip (a group's key, filled from the spec) and group properties (always
// filled by the mapping).
func required(node, props *object, skip string) []any {
	list, _ := node.At("required").([]any)
	var out []any
	for _, r := range list {
		name, _ := r.(string)
		p, _ := props.At(name).(*object)
		if name == skip || p == nil {
			continue
		}
		if ui := p.Obj("x-ui"); ui != nil && ui.At("each") != nil {
			continue
		}
		out = append(out, name)
	}
	return out
}

// group flattens a property with an each hint: an array of objects with one
// element per element of a spec list, matched by a key property.
func (d *flattener) group(p *object, ptr string) (*object, string, error) {
	each := p.Obj("x-ui").Obj("each")
	items := p.Obj("items")
	props := items.Obj("properties")
	if each == nil || p.Str("type") != "array" || props == nil {
		return nil, "", d.fail(ptr+"/x-ui/each", "each needs an object {from, key} on an array of objects with properties")
	}
	from, key := each.Str("from"), each.Str("key")
	if from == "" || key == "" {
		return nil, "", d.fail(ptr+"/x-ui/each", "each needs from (a pointer to a list in the spec) and key (the property that names its element)")
	}
	if k := props.Obj(key); k == nil || k.Str("type") != "string" {
		return nil, "", d.fail(ptr+"/x-ui/each/key", "%q is not a string property of the items", key)
	}
	out := &object{}
	hint := &object{}
	hint.Set("each", each)
	out.Set("x-ui", hint)
	outProps := &object{}
	for _, name := range props.Keys() {
		if name == key {
			continue
		}
		pp := ptr + "/items/properties/" + escape(name)
		c, _ := props.At(name).(*object)
		if c == nil {
			return nil, pp + ": not a schema object", nil
		}
		leaf, reason, err := d.leaf(c, pp)
		if err != nil || reason != "" {
			return nil, reason, err
		}
		outProps.Set(name, leaf)
	}
	out.Set("properties", outProps)
	if req := required(items, props, key); len(req) > 0 {
		out.Set("required", req)
	}
	return out, "", nil
}

// leaf flattens one property into one of MCP's primitive shapes.
func (d *flattener) leaf(p *object, ptr string) (*object, string, error) {
	for _, k := range []string{"oneOf", "anyOf", "allOf", "not", "if", "properties", "patternProperties"} {
		if _, ok := p.Get(k); ok {
			return nil, fmt.Sprintf("%s: %s cannot be asked as a primitive form field", ptr, k), nil
		}
	}
	ui := p.Obj("x-ui")
	typ := p.Str("type")
	if typ == "" && p.At("enum") != nil {
		typ = "string"
	}
	out := &object{}
	out.Set("type", typ)
	if l := ui.Str("label"); l != "" {
		out.Set("title", l)
	}
	if h := ui.Str("help"); h != "" {
		out.Set("description", h) // descriptions are the model's; a person reads help
	}
	copyKeys := func(keys ...string) {
		for _, k := range keys {
			if v, ok := p.Get(k); ok {
				out.Set(k, v)
			}
		}
	}
	dynamic := ui != nil && ui.At("options") != nil
	switch typ {
	case "string":
		if p.At("enum") != nil {
			enum, ok := stringEnum(p)
			if !ok {
				return nil, ptr + "/enum: an elicitation enum holds strings only", nil
			}
			setEnum(out, enum, ui.Obj("labels"), "oneOf")
		} else if !dynamic {
			copyKeys("minLength", "maxLength")
			if f := p.Str("format"); slices.Contains(mcpFormats, f) {
				out.Set("format", f)
			}
		}
		copyKeys("default")
	case "number", "integer":
		copyKeys("minimum", "maximum", "default")
	case "boolean":
		copyKeys("default")
	case "array":
		items := p.Obj("items")
		switch {
		case items != nil && items.At("enum") != nil:
			enum, ok := stringEnum(items)
			if !ok {
				return nil, ptr + "/items/enum: an elicitation enum holds strings only", nil
			}
			it := &object{}
			setEnum(it, enum, ui.Obj("labels"), "anyOf")
			out.Set("items", it)
		case dynamic && items != nil && items.Str("type") == "string":
		default:
			return nil, ptr + ": an array is asked only as a multi-select: its items an enum of strings, or strings picked from the spec (x-ui options)", nil
		}
		copyKeys("minItems", "maxItems", "default")
	default:
		return nil, fmt.Sprintf("%s: type %v cannot be asked as a primitive form field (string, number, integer, boolean, or an array of an enum)", ptr, p.At("type")), nil
	}
	if ui == nil {
		return out, "", nil
	}
	if ui.At("multiIf") != nil && typ != "array" {
		return nil, "", d.fail(ptr+"/x-ui/multiIf", "multiIf asks an array as one pick when false; this property is not an array")
	}
	if bind := ui.Obj("bind"); bind != nil {
		for _, k := range bind.Keys() {
			if !slices.Contains(bindable, k) {
				return nil, "", d.fail(ptr+"/x-ui/bind/"+escape(k), "an elicitation form cannot bind %q (bindable: %v)", k, bindable)
			}
		}
	}
	hints := &object{}
	for _, k := range specHints {
		if v, ok := ui.Get(k); ok {
			hints.Set(k, v)
		}
	}
	if len(hints.Keys()) > 0 {
		out.Set("x-ui", hints)
	}
	return out, "", nil
}

// setEnum writes enum into node as MCP writes an enum: titled ({const,
// title} entries under key) when the page has labels for it, else plain.
func setEnum(node *object, enum []string, labels *object, key string) {
	if labels == nil {
		if key == "anyOf" {
			node.Set("type", "string")
		}
		vals := make([]any, len(enum))
		for i, e := range enum {
			vals[i] = e
		}
		node.Set("enum", vals)
		return
	}
	entries := make([]any, len(enum))
	for i, e := range enum {
		entry := &object{}
		entry.Set("const", e)
		title := labels.Str(e)
		if title == "" {
			title = e
		}
		entry.Set("title", title)
		entries[i] = entry
	}
	node.Set(key, entries)
}

func stringEnum(p *object) ([]string, bool) {
	list, _ := p.At("enum").([]any)
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
