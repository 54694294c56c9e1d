package kindkit_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kindkit/kindkit"
)

// A poll kind in two versions, as two deploys would build it: version 1
// takes a pick named "choice", version 2 renamed it "pick" and upgrades
// version 1's cards.
const (
	pollV1Schema = `{"$defs":{
	  "Spec":{"type":"object","required":["question","options"],"additionalProperties":false,"description":"v1",
	          "properties":{"question":{"type":"string","minLength":1},"options":{"type":"array","minItems":2,"items":{"type":"string"}}}},
	  "Values":{"type":"object","required":["choice"],"additionalProperties":false,"properties":{"choice":{"type":"string"}}}}}`
	pollV2Schema = `{"$defs":{
	  "Spec":{"type":"object","required":["question","options"],"additionalProperties":false,
	          "properties":{"question":{"type":"string","minLength":1},"options":{"type":"array","minItems":2,"items":{"type":"string"}}}},
	  "Values":{"type":"object","required":["pick"],"additionalProperties":false,"properties":{"pick":{"type":"string"}}}}}`
)

type pollSpec struct {
	Question string   `json:"question"`
	Options  []string `json:"options"`
}

type pollV2Values struct {
	Pick string `json:"pick"`
}

// pollV2Rules upgrades version 1's cards: its choice is version 2's
// pick. A spec whose question is "refuse" cannot be upgraded, and one
// whose question is "break" upgrades into a spec version 2 refuses.
type pollV2Rules struct {
	kindkit.Unimplemented[pollSpec, pollV2Values]
}

func (pollV2Rules) Upgrade(from string, spec, values json.RawMessage) (*pollSpec, *pollV2Values, error) {
	var s pollSpec
	var v struct {
		Choice string `json:"choice"`
	}
	if err := json.Unmarshal(spec, &s); err != nil {
		return nil, nil, err
	}
	if s.Question == "refuse" {
		return nil, nil, errors.New("no such question any more")
	}
	if s.Question == "break" {
		s.Options = nil
	}
	if string(values) != "null" {
		if err := json.Unmarshal(values, &v); err != nil {
			return nil, nil, err
		}
	}
	return &s, &pollV2Values{Pick: v.Choice}, nil
}

type versioned struct {
	kindkit.Unimplemented[map[string]any, map[string]any]
	v string
}

func (r versioned) Version() string { return r.v }

func schemaKind(t *testing.T, schema, rulesVersion string) kindkit.Kind {
	t.Helper()
	k, err := kindkit.NewKind[map[string]any, map[string]any](kindkit.Descriptor{Name: "poll", Schema: schema}, versioned{v: rulesVersion})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A kind's version changes with what decides a valid raise or answer (a
// keyword of its $defs, its rules' version), not with its wording.
func TestKindVersion(t *testing.T) {
	v1 := schemaKind(t, pollV1Schema, "").Descriptor().Version
	if len(v1) != 16 {
		t.Fatalf("version %q, want 16 hex digits", v1)
	}
	for name, c := range map[string]struct {
		schema, rules string
		same          bool
	}{
		"the same":                 {schema: pollV1Schema, same: true},
		"reindented":               {schema: strings.ReplaceAll(pollV1Schema, "\n\t  ", " "), same: true},
		"a description":            {schema: strings.Replace(pollV1Schema, `"description":"v1"`, `"description":"version one","title":"T","x-ui":{"a":1}`, 1), same: true},
		"a property named title":   {schema: strings.Replace(pollV1Schema, `"choice":{"type":"string"}`, `"choice":{"type":"string"},"title":{"type":"string"}`, 1)},
		"a bound":                  {schema: strings.Replace(pollV1Schema, `"minItems":2`, `"minItems":3`, 1)},
		"a renamed value":          {schema: pollV2Schema},
		"a rules version":          {schema: pollV1Schema, rules: "2"},
		"a bound in a list schema": {schema: strings.Replace(pollV1Schema, `"items":{"type":"string"}`, `"items":{"type":"string","maxLength":9}`, 1)},
	} {
		got := schemaKind(t, c.schema, c.rules).Descriptor().Version
		if (got == v1) != c.same {
			t.Errorf("%s: version %s, v1 %s; want the same: %v", name, got, v1, c.same)
		}
	}
}

// A catalog keeps earlier versions of its kinds, offered to nobody, found
// by version; Join and Only keep them too.
func TestKeepEarlier(t *testing.T) {
	v1, v2 := schemaKind(t, pollV1Schema, ""), schemaKind(t, pollV2Schema, "")
	note, _ := newNote(t)
	c, err := kindkit.NewCatalog(v2, note)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := c.KeepEarlier(v1)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Version("poll", v1.Descriptor().Version); ok {
		t.Error("KeepEarlier changed the catalog it was called on")
	}
	for _, cat := range []*kindkit.Catalog{kept, mustJoin(t, kept.Named("acme")), mustOnly(t, kept, "poll")} {
		if k, ok := cat.Version("poll", v1.Descriptor().Version); !ok || k != v1 {
			t.Error("the earlier version is not found by its version")
		}
		if k, ok := cat.Version("poll", v2.Descriptor().Version); !ok || k != v2 {
			t.Error("the current version is not found by its version")
		}
		if k, _ := cat.Kind("poll"); k != v2 || len(cat.Kinds()) > 2 {
			t.Errorf("Kind = %v and %d kinds; want the current version only", k, len(cat.Kinds()))
		}
	}
	if _, ok := kept.Version("poll", "0000000000000000"); ok {
		t.Error("a version nobody kept was found")
	}
	if _, err := c.KeepEarlier(v2); err == nil || !strings.Contains(err.Error(), "is the current one") {
		t.Errorf("keeping the current version: %v", err)
	}
	other, err := kindkit.NewKind[map[string]any, map[string]any](kindkit.Descriptor{Name: "vote", Schema: pollV1Schema}, kindkit.Unimplemented[map[string]any, map[string]any]{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.KeepEarlier(other); err == nil || !strings.Contains(err.Error(), `no kind named so`) {
		t.Errorf("keeping a version of a kind the catalog has not: %v", err)
	}
}

func mustJoin(t *testing.T, cs ...*kindkit.Catalog) *kindkit.Catalog {
	t.Helper()
	c, err := kindkit.Join(cs...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustOnly(t *testing.T, c *kindkit.Catalog, names ...string) *kindkit.Catalog {
	t.Helper()
	o, err := c.Only(names...)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// Upgrade brings an earlier version's card and answer to this version,
// for Validate; a kind that declares none says so, and an upgrade that
// fails, or yields a spec this version refuses, is an error.
func TestUpgrade(t *testing.T) {
	v1 := schemaKind(t, pollV1Schema, "")
	v2, err := kindkit.NewKind[pollSpec, pollV2Values](kindkit.Descriptor{Name: "poll", Schema: pollV2Schema}, pollV2Rules{})
	if err != nil {
		t.Fatal(err)
	}
	from := v1.Descriptor().Version
	if !v2.Upgrades() || v1.Upgrades() {
		t.Errorf("Upgrades: v2 %v, v1 %v; want true, false", v2.Upgrades(), v1.Upgrades())
	}
	spec, values, err := v2.Upgrade(from, json.RawMessage(`{"question":"Lunch?","options":["a","b"]}`), json.RawMessage(`{"choice":"a"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, errs := v2.Validate(&spec, values); len(errs) > 0 || string(got) != `{"pick":"a"}` {
		t.Errorf("upgraded answer validates as %s, %v", got, errs)
	}
	if _, _, err := v1.Upgrade(from, json.RawMessage(`{}`), nil); !errors.Is(err, kindkit.ErrNoUpgrade) {
		t.Errorf("a kind with no upgrade: %v", err)
	}
	for question, want := range map[string]string{"refuse": "no such question any more", "break": "the upgraded spec is not valid"} {
		_, _, err := v2.Upgrade(from, json.RawMessage(`{"question":"`+question+`","options":["a","b"]}`), nil)
		if err == nil || !strings.Contains(err.Error(), want) || errors.Is(err, kindkit.ErrNoUpgrade) {
			t.Errorf("%s: %v, want an error saying %q", question, err, want)
		}
	}
}
