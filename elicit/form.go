package elicit

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/internal/jsonx"
)

// A Form is a kind's elicitation form for one spec: the requestedSchema to
// send, the spec's question texts for the message, and how the content of
// an accepted answer maps back to the kind's Values.
type Form struct {
	// Schema is MCP's requestedSchema: flat, primitive properties only
	// (CheckRequestedSchema holds).
	Schema json.RawMessage
	// Texts are the spec's question texts (the Values' x-ui text hint), for
	// the message above the form.
	Texts []string

	fields map[string]field // by property name in the form
	props  []valuesProp     // the Values properties the form fills, in order
	groups []group
}

// field is where one property of the form lands in Values.
type field struct {
	prop   string // the Values property, or the group element's property
	group  int    // index into Form.groups, or -1 for a top-level property
	elem   int    // the element of the group
	single bool   // an array asked as one pick: the answer is wrapped in a list
}

type valuesProp struct {
	name  string
	group int // -1 for a plain property
}

// group is a Values array with one element per element of a spec list
// (the each hint): key names the element, keys are the spec's values of it.
type group struct {
	key  string
	keys []string
}

// NewForm fills a kind's elicitation template (kindkit.Descriptor's
// ElicitationSchema, gen/<kind>gen/elicitation.json) in from a canonical spec.
// The template is MCP's form already, except for the x-ui hints whose
// values depend on the spec; each is a JSON pointer into the spec (inside an
// each group, into the group's element):
//
//   - text (on the root): the texts shown in the message, in order.
//   - fields (on the root, {from, key, required, label}): the form asks only
//     the properties a spec list names, in its order, required and titled as
//     its elements say.
//   - each (on a property, {from, key}): the property is a list with one
//     element per element of the spec list from, named by key; the form asks
//     the element's other properties once per element, as "<key>.<property>".
//   - bind ({keyword: pointer}): keywords from the spec (bounds, a title);
//     minLabel and maxLabel are worded into the description.
//   - showIf (a pointer): the property is asked only when the spec holds true
//     there.
//   - options ({from, value, label}): the picks, from a spec list, as a
//     titled enum: each element's value and label properties, or the
//     element itself when it is a string.
//   - multiIf (a pointer): an array is asked as several picks only when the
//     spec holds true there, else as one.
//
// A template that says the kind is not elicitable gives ErrNotElicitable.
func NewForm(template string, spec json.RawMessage) (*Form, error) {
	t, err := jsonx.DecodeOrdered([]byte(template))
	root, _ := t.(*object)
	if err != nil || root == nil {
		return nil, fmt.Errorf("read the elicitation template: not a JSON object (%v)", err)
	}
	if why := root.Str("x-not-elicitable"); why != "" {
		return nil, fmt.Errorf("%w: %s", ErrNotElicitable, why)
	}
	s, err := jsonx.DecodeOrdered(spec)
	if err != nil {
		return nil, fmt.Errorf("read the spec: %w", err)
	}
	props := root.Obj("properties")
	if props == nil {
		return nil, fmt.Errorf("read the elicitation template: no properties")
	}
	f := &Form{fields: map[string]field{}}
	ui := root.Obj("x-ui")
	for _, p := range list(ui, "text") {
		ptr, _ := p.(string)
		v, _ := jsonx.Pointer(s, ptr)
		if text, _ := v.(string); strings.TrimSpace(text) != "" {
			f.Texts = append(f.Texts, text)
		}
	}

	names, required, titles := asked(root, props, s)
	b := &builder{f: f, props: &object{}}
	for _, name := range names {
		node := props.Obj(name)
		if node == nil {
			return nil, fmt.Errorf("read the elicitation template: property %q is not an object", name)
		}
		if each := node.Obj("x-ui").Obj("each"); each != nil {
			if err := b.group(name, node, each, s); err != nil {
				return nil, err
			}
			continue
		}
		p, single, shown, err := leaf(node, s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if !shown {
			continue
		}
		if t, ok := titles[name]; ok {
			p.Set("title", t)
		}
		if err := b.add(name, p, field{prop: name, group: -1, single: single}, required[name]); err != nil {
			return nil, err
		}
		f.props = append(f.props, valuesProp{name: name, group: -1})
	}
	out := &object{}
	out.Set("type", "object")
	out.Set("properties", b.props)
	if len(b.required) > 0 {
		out.Set("required", b.required)
	}
	if f.Schema, err = json.Marshal(out); err != nil {
		return nil, err
	}
	if err := CheckRequestedSchema(f.Schema); err != nil {
		return nil, fmt.Errorf("the form drawn from this spec breaks MCP's rules for a requested schema: %w", err)
	}
	return f, nil
}

// asked lists the template's top-level properties the form asks, which are
// required, and the titles the spec gives them: all of them, as the
// template says, or those a fields hint picks from a spec list.
func asked(root, props *object, spec any) (names []string, required map[string]bool, titles map[string]string) {
	required, titles = map[string]bool{}, map[string]string{}
	fh := root.Obj("x-ui").Obj("fields")
	if fh == nil {
		for _, r := range list(root, "required") {
			if name, ok := r.(string); ok {
				required[name] = true
			}
		}
		return props.Keys(), required, titles
	}
	for _, e := range specList(spec, fh.Str("from")) {
		el, _ := e.(*object)
		name := el.Str(fh.Str("key"))
		if _, ok := props.Get(name); !ok || slices.Contains(names, name) {
			continue
		}
		names = append(names, name)
		if v, _ := el.Get(fh.Str("required")); v == true {
			required[name] = true
		}
		if l := strings.TrimSpace(el.Str(fh.Str("label"))); l != "" {
			titles[name] = l
		}
	}
	return names, required, titles
}

// builder collects a form's properties in order.
type builder struct {
	f        *Form
	props    *object
	required []any
}

func (b *builder) add(name string, p *object, fl field, required bool) error {
	if _, dup := b.f.fields[name]; dup {
		return fmt.Errorf("the form would have two fields named %q", name)
	}
	b.f.fields[name] = fl
	b.props.Set(name, p)
	if required {
		b.required = append(b.required, name)
	}
	return nil
}

// group adds the fields of an each hint's Values property name: its items'
// properties, once per element of the spec list, as "<key>.<property>".
func (b *builder) group(name string, node, each *object, spec any) error {
	g := group{key: each.Str("key")}
	gi := len(b.f.groups)
	sub := node.Obj("properties")
	if sub == nil {
		return fmt.Errorf("read the elicitation template: group %q has no properties", name)
	}
	for i, e := range specList(spec, each.Str("from")) {
		el, _ := e.(*object)
		k := el.Str(g.key)
		if k == "" {
			return fmt.Errorf("the spec's %s/%d has no %q to name its fields by", each.Str("from"), i, g.key)
		}
		g.keys = append(g.keys, k)
		for _, sn := range sub.Keys() {
			p, single, shown, err := leaf(sub.Obj(sn), el)
			if err != nil {
				return fmt.Errorf("%s %s: %w", k, sn, err)
			}
			if !shown {
				continue
			}
			if err := b.add(k+"."+sn, p, field{prop: sn, group: gi, elem: i, single: single}, slices.Contains(list(node, "required"), any(sn))); err != nil {
				return err
			}
		}
	}
	b.f.groups = append(b.f.groups, g)
	b.f.props = append(b.f.props, valuesProp{name: name, group: gi})
	return nil
}

// leaf fills one property of the template in from base (the spec, or a
// group's element). shown is false when showIf leaves it out.
func leaf(node, base any) (p *object, single, shown bool, err error) {
	n, _ := node.(*object)
	if n == nil {
		return nil, false, false, fmt.Errorf("not a schema object")
	}
	p = &object{}
	for _, k := range n.Keys() {
		if k != "x-ui" {
			p.Set(k, n.At(k))
		}
	}
	ui := n.Obj("x-ui")
	if ui == nil {
		return p, false, true, nil
	}
	if ptr := ui.Str("showIf"); ptr != "" {
		if v, _ := jsonx.Pointer(base, ptr); v != true {
			return nil, false, false, nil
		}
	}
	labels := map[string]string{}
	if bind := ui.Obj("bind"); bind != nil {
		for _, k := range bind.Keys() {
			ptr, _ := bind.At(k).(string)
			v, ok := jsonx.Pointer(base, ptr)
			if !ok || v == nil {
				continue
			}
			if k == "minLabel" || k == "maxLabel" {
				labels[k], _ = v.(string)
				continue
			}
			p.Set(k, v)
		}
	}
	if opts := ui.Obj("options"); opts != nil {
		var entries []any
		for i, e := range specList(base, opts.Str("from")) {
			c, title := optionOf(e, opts.Str("value"), opts.Str("label"))
			if c == "" {
				return nil, false, false, fmt.Errorf("the spec's %s/%d has no %q to offer", opts.Str("from"), i, opts.Str("value"))
			}
			entry := &object{}
			entry.Set("const", c)
			entry.Set("title", title)
			entries = append(entries, entry)
		}
		if len(entries) == 0 {
			return nil, false, false, fmt.Errorf("the spec's %s offers nothing to pick", opts.Str("from"))
		}
		if p.Str("type") == "array" {
			items := &object{}
			items.Set("anyOf", entries)
			p.Set("items", items)
		} else {
			p.Set("oneOf", entries)
		}
	}
	if ptr := ui.Str("multiIf"); ptr != "" && p.Str("type") == "array" {
		if v, _ := jsonx.Pointer(base, ptr); v != true {
			single = true
			asOnePick(p)
		}
	}
	if len(labels) > 0 {
		p.Set("description", describeEnds(p, labels))
	}
	return p, single, true, nil
}

// optionOf reads one option of a spec list: the value and label properties
// of an object, or a string itself.
func optionOf(e any, value, label string) (string, string) {
	if s, ok := e.(string); ok {
		return s, s
	}
	el, _ := e.(*object)
	c, title := el.Str(value), el.Str(label)
	if title == "" {
		title = c
	}
	return c, title
}

// asOnePick turns a multi-select array into the single-select string of the
// same picks.
func asOnePick(p *object) {
	items := p.Obj("items")
	p.Set("type", "string")
	if anyOf, ok := items.Get("anyOf"); ok {
		p.Set("oneOf", anyOf)
	} else if enum, ok := items.Get("enum"); ok {
		p.Set("enum", enum)
	}
	if d, ok := p.At("default").([]any); ok && len(d) == 1 {
		p.Set("default", d[0])
	} else {
		p.Delete("default")
	}
	for _, k := range []string{"items", "minItems", "maxItems"} {
		p.Delete(k)
	}
}

// describeEnds words a scale's end labels: "1 = Not at all, 5 = Very".
func describeEnds(p *object, labels map[string]string) string {
	var parts []string
	for _, end := range []struct{ label, bound, word string }{{"minLabel", "minimum", "lowest"}, {"maxLabel", "maximum", "highest"}} {
		l := strings.TrimSpace(labels[end.label])
		if l == "" {
			continue
		}
		if b, ok := p.Get(end.bound); ok {
			parts = append(parts, fmt.Sprintf("%v = %s", b, l))
		} else {
			parts = append(parts, end.word+": "+l)
		}
	}
	d := strings.TrimSpace(p.Str("description"))
	if d != "" {
		d += " "
	}
	return d + strings.Join(parts, ", ")
}

// Values maps the content of an accepted answer back to the kind's Values
// (not yet validated: that is the kind's). A property the form did not ask
// is a field error; a null counts as absent.
func (f *Form) Values(content map[string]any) (json.RawMessage, []kindkit.FieldError) {
	var errs []kindkit.FieldError
	top := map[string]any{}
	elems := make([][]*object, len(f.groups))
	for gi, g := range f.groups {
		for _, k := range g.keys {
			el := &object{}
			el.Set(g.key, k)
			elems[gi] = append(elems[gi], el)
		}
	}
	names := make([]string, 0, len(content))
	for name := range content {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v := content[name]
		fl, ok := f.fields[name]
		if !ok {
			errs = append(errs, kindkit.FieldError{Field: name, Message: "this form has no such field"})
			continue
		}
		if v == nil {
			continue
		}
		if fl.single {
			v = []any{v}
		}
		if fl.group < 0 {
			top[fl.prop] = v
		} else {
			elems[fl.group][fl.elem].Set(fl.prop, v)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	values := &object{}
	for _, p := range f.props {
		if p.group >= 0 {
			list := make([]any, len(elems[p.group]))
			for i, el := range elems[p.group] {
				list[i] = el
			}
			values.Set(p.name, list)
		} else if v, ok := top[p.name]; ok {
			values.Set(p.name, v)
		}
	}
	out, err := json.Marshal(values)
	if err != nil {
		return nil, []kindkit.FieldError{{Field: "values", Message: "the answer cannot be read: " + err.Error()}}
	}
	return out, nil
}

func list(o *object, k string) []any {
	v, _ := o.Get(k)
	l, _ := v.([]any)
	return l
}

func specList(base any, ptr string) []any {
	v, _ := jsonx.Pointer(base, ptr)
	l, _ := v.([]any)
	return l
}
