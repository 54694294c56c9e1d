package kindgen

import (
	"strconv"
	"strings"

	"github.com/kindkit/kindkit/internal/jsonx"
)

// derived are the schemas kindgen derives from a kind's schema file. Each
// is written as gen/<kind>gen/<file>, beside schema.json (the file as
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
	o.Set("type", "string")
	o.Set("description", "Why you are asking, in a short phrase the visitor will read (for example \"to send you the quote\").")
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
	props, _ := obj.Get("properties")
	props.(*object).Set("reason", reasonProperty())
	required, _ := obj.Get("required")
	list, _ := required.([]any)
	obj.Set("required", append(list, "reason"))
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
	defs, _ := in.s.Tree.Get("$defs")
	d, _ := defs.(*object).Get(name)
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
		if ref, ok := n.At("$ref").(string); ok {
			for _, r := range refs {
				if r == ref {
					return nil, &SchemaError{Path: in.s.Path, Pointer: ptr + "/$ref", Message: in.what}
				}
			}
			target, _ := jsonx.Pointer(in.s.Tree, strings.TrimPrefix(ref, "#"))
			resolved, err := in.inline(target, strings.TrimPrefix(ref, "#"), append(refs[:len(refs):len(refs)], ref))
			if err != nil {
				return nil, err
			}
			if r, ok := resolved.(*object); ok {
				for _, k := range r.Keys() {
					if _, shadowed := n.Get(k); !shadowed {
						out.Set(k, r.At(k))
					}
				}
			}
		}
		for _, k := range n.Keys() {
			v := n.At(k)
			switch {
			case in.drop(k):
			case dataKeywords[k]:
				out.Set(k, v)
			case nameKeywords[k]:
				names, ok := v.(*object)
				if !ok {
					out.Set(k, v)
					continue
				}
				m := &object{}
				for _, name := range names.Keys() {
					c, err := in.inline(names.At(name), ptr+"/"+escape(k)+"/"+escape(name), refs)
					if err != nil {
						return nil, err
					}
					m.Set(name, c)
				}
				out.Set(k, m)
			default:
				c, err := in.inline(v, ptr+"/"+escape(k), refs)
				if err != nil {
					return nil, err
				}
				out.Set(k, c)
			}
		}
		return out, nil
	}
	return node, nil
}
