package kindkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// DefaultReason is the reason shown when the model gave none.
const DefaultReason = "to help you better"

// Descriptor is what kindgen read from a kind's schema file.
type Descriptor struct {
	Name            string // wire name, e.g. "choices"
	Capability      string // what a client declares in supports to get the card
	ToolName        string // the raise tool, e.g. "request_choices"; "" when only host code asks the kind
	ToolDescription string
	Source          string // the schema file, for messages
	Schema          string // the schema document
	ToolSchema      string // the raise tool's parameters: Spec's properties plus reason
	ValuesSchema    string // Values with every $ref inlined, for a form drawn from it
	// ElicitationSchema is the template of the kind's MCP elicitation form
	// (MCP's flat requestedSchema, with the parts that depend on the spec
	// left as x-ui hints), or a marker that the kind is not elicitable;
	// package elicit reads it.
	ElicitationSchema string
	// Deadline is the kind's deadline policy (x-kind deadline): how long
	// its cards wait and what expiry resolves them to, where the engine's
	// default would. An Ask's own (WithDeadline) comes first.
	Deadline Deadline
	// Addressee, when set (x-kind addressee), addresses every card of the
	// kind, as AddressedTo does one Ask's (which comes first): a principal,
	// or group:NAME.
	Addressee string
	// Version is the kind's version, which NewKind sets (whatever it is
	// given): a digest of the schema, less its wording and x- hints, and of the
	// rules' version (VersionedRules). A card keeps the version that asked
	// it, and an answer to it is taken as it was asked (Catalog.Version,
	// Kind.Upgrade).
	Version string
}

// Rules is what a kind says that its schema cannot. gen/<kind>gen names it for
// its own types (<kind>gen.Rules); kinds/<kind> implements it, embedding
// Unimplemented for the methods it leaves out.
type Rules[S, V any] interface {
	// NormalizeRaise rewrites raw raise arguments (reason removed) into the
	// Spec's shape before schema validation: shorthands, trimming, defaults.
	NormalizeRaise(args map[string]any)
	// NormalizeValues rewrites submitted values that break the schema as
	// sent into its shape: the lenient forms a kind accepts (null for an
	// empty object, unknown keys it ignores). values may be nil (JSON null).
	// Values that pass the schema as sent are not passed to it.
	NormalizeValues(values any) any
	// CheckSpec reports what is wrong with a schema-valid spec.
	CheckSpec(spec *S) []FieldError
	// Validate checks schema-valid values against the spec and returns them
	// canonical. spec is nil when it is unknown (a conversational submit in a
	// later turn): only the values' own format can be checked then.
	Validate(spec *S, values *V) (*V, []FieldError)
	// Fallback is the directive that tells the model how to ask the
	// question in conversation; "" means DefaultFallback.
	Fallback(spec *S, reason string) string
	// ErrorField names the field a schema error at location belongs to;
	// "" means DefaultErrorField.
	ErrorField(values any, location []string) string
}

// Unimplemented is a kind's schema alone: no rules beyond it and the
// default fallback. Embed it in a kind's Rules and write only the methods
// the kind needs.
type Unimplemented[S, V any] struct{}

var _ Rules[struct{}, struct{}] = Unimplemented[struct{}, struct{}]{}

func (Unimplemented[S, V]) NormalizeRaise(map[string]any)               {}
func (Unimplemented[S, V]) NormalizeValues(values any) any              { return values }
func (Unimplemented[S, V]) CheckSpec(*S) []FieldError                   { return nil }
func (Unimplemented[S, V]) Validate(_ *S, values *V) (*V, []FieldError) { return values, nil }
func (Unimplemented[S, V]) Fallback(*S, string) string                  { return "" }
func (Unimplemented[S, V]) ErrorField(_ any, _ []string) string         { return "" }

// Kind is one interaction kind, ready for a server.
type Kind interface {
	Descriptor() Descriptor
	// ParseRaise checks raise tool arguments and returns the canonical spec
	// and reason, or a *RaiseError the model can act on.
	ParseRaise(args []byte) (Raise, error)
	// LoadSpec reads a canonical spec that ParseRaise produced earlier; it
	// decodes it without validating it again.
	LoadSpec(spec json.RawMessage) (Spec, error)
	// Validate checks submitted values and returns them canonical, or every
	// problem at once. spec may be nil: see Rules.Validate.
	Validate(spec *Spec, values json.RawMessage) (json.RawMessage, []FieldError)
	// Fallback is the raise tool's result on a session that cannot show the
	// card: the conversational directive with the spec and reason.
	Fallback(spec Spec, reason string) string
	// Upgrades tells whether the kind's rules declare an upgrade of its
	// earlier versions' cards (Upgrader).
	Upgrades() bool
	// Upgrade brings a card that version from of the kind asked (its
	// canonical spec) and its answer (values as that card sent them, null
	// when there is none) to this version: the spec checked as a raise's
	// would be, the values for Validate to check with it. ErrNoUpgrade
	// when the rules declare no upgrade; any other error when they cannot
	// upgrade this card, or upgrade it into a spec this version refuses.
	Upgrade(from string, spec, values json.RawMessage) (Spec, json.RawMessage, error)
}

// Raise is a parsed raise: the canonical spec and the reason.
type Raise struct {
	Spec   Spec
	Reason string
}

// Spec is a canonical spec, as JSON and as its kind's typed value.
type Spec struct {
	JSON  json.RawMessage
	typed any
}

type kindImpl[S, V any] struct {
	desc   Descriptor
	rules  Rules[S, V]
	spec   schema
	values schema
	names  map[string]string // the property names in the schema, and reason: the keys decodeAny need not copy
}

// NewKind compiles the kind's schema once and wires it to its rules.
func NewKind[S, V any](d Descriptor, rules Rules[S, V]) (Kind, error) {
	doc, err := readSchemaDoc(d.Schema, d.Source)
	if err != nil {
		return nil, fmt.Errorf("kind %s: %w", d.Name, err)
	}
	rulesVersion := ""
	if v, ok := rules.(VersionedRules); ok {
		rulesVersion = v.Version()
	}
	d.Version = kindVersion(doc.doc, rulesVersion)
	k := &kindImpl[S, V]{desc: d, rules: rules, names: propertyNames(doc.doc)}
	if k.spec, err = doc.compile("#/$defs/Spec"); err != nil {
		return nil, fmt.Errorf("kind %s: compile Spec: %w", d.Name, err)
	}
	if k.values, err = doc.compile("#/$defs/Values"); err != nil {
		return nil, fmt.Errorf("kind %s: compile Values: %w", d.Name, err)
	}
	return k, nil
}

// schemaDoc is a kind's schema document, read once, ready to compile the
// schemas in it, each with its precheck.
type schemaDoc struct {
	doc any // as the validator read it: numbers are json.Number
	url string
	c   *jsonschema.Compiler
}

func readSchemaDoc(text, source string) (*schemaDoc, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "kindkit:///" + source
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return &schemaDoc{doc: doc, url: url, c: c}, nil
}

// propertyNames is every name a "properties" in schema defines, and
// reason, the raise's own.
func propertyNames(schema any) map[string]string {
	names := map[string]string{"reason": "reason"}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if props, ok := v["properties"].(map[string]any); ok {
				for name := range props {
					names[name] = name
				}
			}
			for _, sub := range v {
				walk(sub)
			}
		case []any:
			for _, sub := range v {
				walk(sub)
			}
		}
	}
	walk(schema)
	return names
}

// compile compiles the schema at pointer, a JSON pointer fragment such as
// "#/$defs/Spec".
func (d *schemaDoc) compile(pointer string) (schema, error) {
	full, err := d.c.Compile(d.url + pointer)
	if err != nil {
		return schema{}, err
	}
	return schema{pre: newPrecheck(d.doc, pointer), full: full}, nil
}

func (k *kindImpl[S, V]) Descriptor() Descriptor { return k.desc }

func (k *kindImpl[S, V]) ParseRaise(args []byte) (Raise, error) {
	fail := func(errs ...FieldError) (Raise, error) {
		return Raise{}, &RaiseError{Tool: k.desc.ToolName, Errors: errs}
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = []byte("{}")
	}
	raw, err := decodeAny(args, k.names)
	if err != nil {
		return fail(FieldError{Message: "arguments are not valid JSON: " + err.Error()})
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return fail(FieldError{Message: "arguments must be a JSON object"})
	}
	reason := DefaultReason
	if r, present := obj["reason"]; present {
		s, ok := r.(string)
		if !ok && r != nil {
			return fail(FieldError{Field: "reason", Message: "must be a string"})
		}
		if s = strings.TrimSpace(s); s != "" {
			reason = s
		}
		delete(obj, "reason")
	}
	k.rules.NormalizeRaise(obj)
	if err := k.spec.Validate(obj); err != nil {
		var errs []FieldError
		schemaErrors(err, func(loc []string, msg string) {
			errs = append(errs, FieldError{Field: Path(loc), Message: msg})
		})
		return fail(errs...)
	}
	spec, err := decodeTyped[S](obj)
	if err != nil {
		return fail(FieldError{Message: err.Error()})
	}
	if errs := k.rules.CheckSpec(spec); len(errs) > 0 {
		return fail(errs...)
	}
	out, err := json.Marshal(spec)
	if err != nil {
		return fail(FieldError{Message: err.Error()})
	}
	return Raise{Spec: Spec{JSON: out, typed: spec}, Reason: reason}, nil
}

func (k *kindImpl[S, V]) LoadSpec(raw json.RawMessage) (Spec, error) {
	spec, err := k.loadSpec(raw)
	if err != nil {
		return Spec{}, err
	}
	return Spec{JSON: raw, typed: spec}, nil
}

// loadSpec decodes a spec that ParseRaise made canonical earlier (a stored
// park, a stash). It is the project's own data, so it is decoded, not
// validated again: a submit pays for one validation, of the values.
func (k *kindImpl[S, V]) loadSpec(raw json.RawMessage) (*S, error) {
	var s S
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("load %s spec: %w", k.desc.Name, err)
	}
	return &s, nil
}

// typedSpec returns the spec's typed value, decoding its JSON if it came from
// elsewhere.
func (k *kindImpl[S, V]) typedSpec(spec *Spec) (*S, error) {
	if spec == nil {
		return nil, nil
	}
	if s, ok := spec.typed.(*S); ok {
		return s, nil
	}
	return k.loadSpec(spec.JSON)
}

func (k *kindImpl[S, V]) Validate(spec *Spec, values json.RawMessage) (json.RawMessage, []FieldError) {
	s, err := k.typedSpec(spec)
	if err != nil {
		return nil, []FieldError{{Field: "values", Message: "the question can no longer be checked: " + err.Error()}}
	}
	v, errs := k.decodeValues(values)
	if len(errs) > 0 {
		return nil, errs
	}
	canonical, errs := k.rules.Validate(s, v)
	if len(errs) > 0 {
		return nil, errs
	}
	out, err := json.Marshal(canonical)
	if err != nil {
		return nil, []FieldError{{Field: "values", Message: err.Error()}}
	}
	return out, nil
}

// decodeValues checks values against the Values schema and decodes them.
// Values that break the schema as sent get one chance to be rewritten by
// the rules' NormalizeValues (a lenient form the kind accepts). The bytes
// are parsed once for the check; values valid as sent are read into the
// struct from the bytes (the checked tree holds nothing more: decodeAny
// refused repeated keys and invalid UTF-8), rewritten ones from the tree.
func (k *kindImpl[S, V]) decodeValues(values json.RawMessage) (*V, []FieldError) {
	raw, err := decodeAny(values, k.names)
	if err != nil {
		return nil, []FieldError{{Field: "values", Message: "invalid values shape: " + err.Error()}}
	}
	var v *V
	if k.values.Validate(raw) == nil {
		v = new(V)
		err = jsonv2.Unmarshal(values, v)
	} else {
		raw = k.rules.NormalizeValues(raw)
		if err := k.values.Validate(raw); err != nil {
			var errs []FieldError
			schemaErrors(err, func(loc []string, msg string) {
				field := k.rules.ErrorField(raw, loc)
				if field == "" {
					field = DefaultErrorField(loc)
				}
				errs = append(errs, FieldError{Field: field, Message: msg})
			})
			return nil, errs
		}
		v, err = decodeTyped[V](raw)
	}
	if err != nil {
		return nil, []FieldError{{Field: "values", Message: "invalid values shape: " + err.Error()}}
	}
	return v, nil
}

func (k *kindImpl[S, V]) Fallback(spec Spec, reason string) string {
	s, err := k.typedSpec(&spec)
	instructions := ""
	if err == nil {
		if instructions = k.rules.Fallback(s, reason); instructions == "" {
			instructions = DefaultFallback(k.desc.Name, s, reason)
		}
	}
	return marshalString(FallbackDirective{Instructions: instructions, Kind: k.desc.Name, Mode: "conversational", Reason: reason, Spec: spec.JSON})
}

func (k *kindImpl[S, V]) Upgrades() bool {
	_, ok := k.rules.(Upgrader[S, V])
	return ok
}

func (k *kindImpl[S, V]) Upgrade(from string, spec, values json.RawMessage) (Spec, json.RawMessage, error) {
	up, ok := k.rules.(Upgrader[S, V])
	if !ok {
		return Spec{}, nil, ErrNoUpgrade
	}
	if len(values) == 0 {
		values = json.RawMessage("null")
	}
	s, v, err := up.Upgrade(from, spec, values)
	if err != nil {
		return Spec{}, nil, fmt.Errorf("upgrade %s from version %s: %w", k.desc.Name, from, err)
	}
	if s == nil {
		return Spec{}, nil, fmt.Errorf("upgrade %s from version %s: no spec", k.desc.Name, from)
	}
	out, err := json.Marshal(s)
	if err != nil {
		return Spec{}, nil, fmt.Errorf("upgrade %s from version %s: %w", k.desc.Name, from, err)
	}
	// The upgraded spec is the rules' own output, checked as a raise's
	// would be: a spec this version refuses is the upgrade's bug, never
	// a card shown or validated against.
	tree, err := decodeAny(out, k.names)
	if err == nil {
		err = k.spec.Validate(tree)
	}
	if err == nil {
		if errs := k.rules.CheckSpec(s); len(errs) > 0 {
			err = &RaiseError{Errors: errs}
		}
	}
	if err != nil {
		return Spec{}, nil, fmt.Errorf("upgrade %s from version %s: the upgraded spec is not valid: %w", k.desc.Name, from, err)
	}
	upgraded, err := json.Marshal(v) // nil values: null
	if err != nil {
		return Spec{}, nil, fmt.Errorf("upgrade %s from version %s: %w", k.desc.Name, from, err)
	}
	return Spec{JSON: out, typed: s}, upgraded, nil
}
