package kindgen

import (
	"strconv"
	"strings"
)

// derived are the schemas kindgen derives from a kind's schema file. Each
// is written as gen/<kind>/<file>, beside schema.json (the file as
// authored), and embedded by kind.gen.go into the kind's Descriptor under
// field. A new derivation is one more entry here and one more Descriptor
// field.
var derived = []struct {
	file, field, doc string
	derive           func(*Schema) (any, error)
}{
	{"tool.json", "ToolSchema", "the raise tool's parameters: Spec's properties plus a required reason", toolSchema},
	{"values.json", "ValuesSchema", "Values with every $ref inlined, for the page's generic form", valuesSchema},
	{"elicitation.json", "ElicitationSchema", "Values as an MCP elicitation form (or why it cannot be one), for package elicit", elicitationSchema},
}

// reasonProperty is added to every raise tool: the model says why it asks.
func reasonProperty() *object {
	o := &object{}
	o.set("type", "string")
	o.set("description", "Why you are asking, in a short phrase the visitor will read (for example \"to send you the quote\").")
	return o
}

// toolSchema is the raise tool's parameters: Spec with every $ref inlined,
// without the annotations model APIs do not take (titles, $-keywords, x-
// extensions), plus a required reason.
func toolSchema(s *Schema) (any, error) {
	in := &inliner{s: s, what: "Spec is recursive; a raise tool's parameters cannot be", drop: func(k string) bool {
		return k == "title" || strings.HasPrefix(k, "$") || strings.HasPrefix(k, "x-")
	}}
	v, err := in.inline(in.def("Spec"), "/$defs/Spec", nil)
	if err != nil {
		return nil, err
	}
	obj := v.(*object) // Load checked that Spec is an object schema with properties
	props, _ := obj.get("properties")
	props.(*object).set("reason", reasonProperty())
	required, _ := obj.get("required")
	list, _ := required.([]any)
	obj.set("required", append(list, "reason"))
	return obj, nil
}

// valuesSchema is Values with every $ref inlined and no $-keywords: a form
// is drawn from it without resolving anything.
func valuesSchema(s *Schema) (any, error) {
	in := &inliner{s: s, what: "Values is recursive; a form cannot be drawn from it", drop: func(k string) bool {
		return strings.HasPrefix(k, "$")
	}}
	return in.inline(in.def("Values"), "/$defs/Values", nil)
}

// inliner copies a schema with its local $refs (checked by Load) replaced by
// what they name. Keywords beside a $ref win over the referenced schema's.
type inliner struct {
	s    *Schema
	what string              // the error of a recursive schema
	drop func(k string) bool // keywords left out of the copy
}

// dataKeywords hold instances, not schemas: a "$ref" inside them is data.
var dataKeywords = map[string]bool{"enum": true, "const": true, "default": true, "examples": true}

// nameKeywords map names to schemas: their keys are names, not keywords.
var nameKeywords = map[string]bool{"properties": true, "patternProperties": true, "dependentSchemas": true, "$defs": true}

func (in *inliner) def(name string) any {
	defs, _ := in.s.Tree.get("$defs")
	d, _ := defs.(*object).get(name)
	return d
}

// inline copies node, found at ptr; refs is the chain of $refs followed to
// get there, so a cycle is reported instead of followed.
func (in *inliner) inline(node any, ptr string, refs []string) (any, error) {
	switch n := node.(type) {
	case []any:
		out := make([]any, len(n))
		for i, v := range n {
			var err error
			if out[i], err = in.inline(v, ptr+"/"+strconv.Itoa(i), refs); err != nil {
				return nil, err
			}
		}
		return out, nil
	case *object:
		out := &object{}
		if ref, ok := n.vals["$ref"].(string); ok {
			for _, r := range refs {
				if r == ref {
					return nil, &SchemaError{Path: in.s.Path, Pointer: ptr + "/$ref", Message: in.what}
				}
			}
			target, _ := pointer(in.s.Tree, strings.TrimPrefix(ref, "#"))
			resolved, err := in.inline(target, strings.TrimPrefix(ref, "#"), append(refs[:len(refs):len(refs)], ref))
			if err != nil {
				return nil, err
			}
			if r, ok := resolved.(*object); ok {
				for _, k := range r.keys {
					if _, shadowed := n.vals[k]; !shadowed {
						out.set(k, r.vals[k])
					}
				}
			}
		}
		for _, k := range n.keys {
			v := n.vals[k]
			switch {
			case in.drop(k):
			case dataKeywords[k]:
				out.set(k, v)
			case nameKeywords[k]:
				names, ok := v.(*object)
				if !ok {
					out.set(k, v)
					continue
				}
				m := &object{}
				for _, name := range names.keys {
					c, err := in.inline(names.vals[name], ptr+"/"+escape(k)+"/"+escape(name), refs)
					if err != nil {
						return nil, err
					}
					m.set(name, c)
				}
				out.set(k, m)
			default:
				c, err := in.inline(v, ptr+"/"+escape(k), refs)
				if err != nil {
					return nil, err
				}
				out.set(k, c)
			}
		}
		return out, nil
	}
	return node, nil
}

// pointer follows a JSON pointer in a tree decodeOrdered made, or in one
// encoding/json made (objects as maps).
func pointer(root any, ptr string) (any, bool) {
	cur := root
	if ptr == "" {
		return cur, true
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case *object:
			v, ok := c.get(tok)
			if !ok {
				return nil, false
			}
			cur = v
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}
