package elicitation_test

import (
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/gen/elicitationgen"
	"github.com/kindkit/kindkit/kinds/elicitation"
	"github.com/kindkit/kindkit/kindtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newKind(t testing.TB) kindkit.Kind {
	t.Helper()
	k, err := elicitationgen.New(elicitation.Rules{})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// everything is the shape of the requested schema of the reference MCP
// server's elicitation tool: every kind of property MCP allows.
const everything = `{"server":"everything","message":"Please provide inputs","reason":"r","requestedSchema":{"type":"object","required":["name"],"properties":{
 "name":{"type":"string","title":"Name","minLength":1},
 "check":{"type":"boolean","title":"Agree"},
 "email":{"type":"string","format":"email"},
 "homepage":{"type":"string","format":"uri"},
 "birthdate":{"type":"string","format":"date"},
 "integer":{"type":"integer","minimum":1,"maximum":100,"default":42},
 "number":{"type":"number","minimum":0,"maximum":1000},
 "friend":{"type":"string","enum":["Monica","Joey"]},
 "pet":{"type":"string","enum":["pet-1","pet-2"],"enumNames":["Cats","Dogs"]},
 "hero":{"type":"string","oneOf":[{"const":"hero-1","title":"Superman"}]},
 "instruments":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"string","enum":["Guitar","Piano","Drums"]}},
 "fish":{"type":"array","items":{"anyOf":[{"const":"fish-1","title":"Tuna"}]}}}}}`

func TestRequestedSchema(t *testing.T) {
	k := newKind(t)
	kindtest.Raise(t, k, everything)
	for name, c := range map[string]struct{ schema, want string }{
		"nested object":   {`{"type":"object","properties":{"a":{"type":"object"}}}`, "/properties/a/type: must be string, number, integer, boolean or array (got object)"},
		"ref":             {`{"type":"object","properties":{"a":{"type":"string","$ref":"#/x"}}}`, "/properties/a/$ref: is not allowed here"},
		"not an object":   {`{"type":"array","properties":{}}`, `type: must be "object"`},
		"no properties":   {`{"type":"object"}`, "/properties: must be an object"},
		"unnamed":         {`{"type":"object","properties":{"":{"type":"string"}}}`, "a property needs a name"},
		"bad format":      {`{"type":"object","properties":{"a":{"type":"string","format":"ipv4"}}}`, "properties/a/format"},
		"required absent": {`{"type":"object","properties":{"a":{"type":"string"}},"required":["b"]}`, `/required/0: names "b", which is not a property`},
		"array of arrays": {`{"type":"object","properties":{"a":{"type":"array","items":{"type":"array"}}}}`, "/properties/a/items/enum: must be a non-empty list of strings"},
		"untitled oneOf":  {`{"type":"object","properties":{"a":{"type":"string","oneOf":[{"const":1}]}}}`, "/properties/a/oneOf/0/title: must be a non-empty string"},
		"bad keyword":     {`{"type":"object","properties":{"a":{"type":"string","pattern":"x"}}}`, "/properties/a/pattern: is not allowed here"},
		"not compilable":  {`{"type":"object","properties":{"a":{"type":"string","minLength":-1}}}`, "requestedSchema"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := k.ParseRaise([]byte(`{"server":"s","message":"m","requestedSchema":` + c.schema + `}`))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one with %q", err, c.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	k := newKind(t)
	spec := kindtest.Raise(t, k, everything).Spec
	good := `{"name":"Ada","check":true,"email":"ada@example.com","homepage":"https://ada.example","birthdate":"1815-12-10","integer":7,"number":2.5,"friend":"Joey","pet":"pet-2","hero":"hero-1","instruments":["Piano"],"fish":["fish-1"]}`
	out, errs := kindtest.Validate(t, k, &spec, []byte(good))
	if len(errs) > 0 {
		t.Fatalf("good answer refused: %v", errs)
	}
	kindtest.Idempotent(t, k, &spec, out)
	for name, c := range map[string]struct{ values, field string }{
		"missing required": {`{"check":true}`, "name"},
		"email":            {`{"name":"A","email":"not an email"}`, "email"},
		"date":             {`{"name":"A","birthdate":"10 Dec 1815"}`, "birthdate"},
		"out of range":     {`{"name":"A","integer":101}`, "integer"},
		"fraction":         {`{"name":"A","integer":1.5}`, "integer"},
		"not offered":      {`{"name":"A","friend":"Ross"}`, "friend"},
		"too many":         {`{"name":"A","instruments":["Piano","Guitar","Drums"]}`, "instruments"},
		"titled not given": {`{"name":"A","hero":"Superman"}`, "hero"},
		"wrong type":       {`{"name":"A","check":"yes"}`, "check"},
		"not an object":    {`[1]`, "values"},
	} {
		t.Run(name, func(t *testing.T) {
			_, errs := kindtest.Validate(t, k, &spec, []byte(c.values))
			if len(errs) == 0 {
				t.Fatalf("%s accepted", c.values)
			}
			if errs[0].Field != c.field {
				t.Errorf("errors %v, want the first on %s", errs, c.field)
			}
		})
	}
	if _, errs := kindtest.Validate(t, k, &spec, []byte("null")); len(errs) == 0 || errs[0].Field != "name" {
		t.Errorf("null: errors %v, want name required", errs)
	}
}

func TestFallback(t *testing.T) {
	k := newKind(t)
	r := kindtest.Raise(t, k, everything)
	got := k.Fallback(r.Spec, r.Reason)
	for _, want := range []string{`\"everything\"`, "Please provide inputs", "name {", "(required)", `kind \"elicitation\"`} {
		if !strings.Contains(got, want) {
			t.Errorf("fallback lacks %q:\n%s", want, got)
		}
	}
}

// TestURLMode: a URL-mode elicitation needs an http or https link with a
// host and no schema, and its answer carries nothing; a form-mode one
// needs its schema and no link.
func TestURLMode(t *testing.T) {
	k := newKind(t)
	const ok = `{"server":"s","message":"Connect your calendar","mode":"url","url":"https://auth.example.com/connect?x=1","elicitationId":"e1","reason":"r"}`
	spec := kindtest.Raise(t, k, ok).Spec
	kindtest.Raise(t, k, `{"server":"s","message":"m","mode":"url","url":"http://localhost:8080/pay","reason":"r"}`) // no id: MCP 2026-07-28
	kindtest.Raise(t, k, `{"server":"s","message":"m","mode":"form","requestedSchema":{"type":"object","properties":{"a":{"type":"string"}}},"reason":"r"}`)
	for name, c := range map[string]struct{ args, field, want string }{
		"javascript":        {`"mode":"url","url":"javascript:alert(1)"`, "url", `must be an http or https link (got "javascript:")`},
		"data":              {`"mode":"url","url":"data:text/html,hi"`, "url", "http or https"},
		"file":              {`"mode":"url","url":"file:///etc/passwd"`, "url", "http or https"},
		"relative":          {`"mode":"url","url":"/connect"`, "url", "http or https"},
		"no host":           {`"mode":"url","url":"https:///connect"`, "url", "must name a host"},
		"user part":         {`"mode":"url","url":"https://bank.example@evil.example/"`, "url", "user name or password"},
		"space":             {`"mode":"url","url":"https://a.example/ x"`, "url", "spaces or control characters"},
		"no url":            {`"mode":"url"`, "url", "needs a url"},
		"schema in url":     {`"mode":"url","url":"https://a.example/","requestedSchema":{"type":"object","properties":{}}`, "requestedSchema", "no requested schema"},
		"url in form":       {`"url":"https://a.example/","requestedSchema":{"type":"object","properties":{"a":{"type":"string"}}}`, "url", "only a URL-mode"},
		"id in form":        {`"elicitationId":"e","requestedSchema":{"type":"object","properties":{"a":{"type":"string"}}}`, "elicitationId", "only a URL-mode"},
		"form needs schema": {`"mode":"form"`, "requestedSchema", "needs a requested schema"},
		"unknown mode":      {`"mode":"sms","url":"https://a.example/"`, "mode", ""},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := k.ParseRaise([]byte(`{"server":"s","message":"m","reason":"r",` + c.args + `}`))
			var re *kindkit.RaiseError
			if !errors.As(err, &re) || len(re.Errors) == 0 || re.Errors[0].Field != c.field || !strings.Contains(re.Errors[0].Message, c.want) {
				t.Fatalf("error %v, want one on %s with %q", err, c.field, c.want)
			}
		})
	}
	if out, errs := kindtest.Validate(t, k, &spec, []byte(`{}`)); len(errs) > 0 {
		t.Errorf("done refused: %v", errs)
	} else {
		kindtest.Idempotent(t, k, &spec, out)
	}
	if _, errs := kindtest.Validate(t, k, &spec, []byte(`null`)); len(errs) > 0 {
		t.Errorf("null (done) refused: %v", errs)
	}
	if _, errs := kindtest.Validate(t, k, &spec, []byte(`{"password":"hunter2"}`)); len(errs) == 0 || errs[0].Field != "values" {
		t.Errorf("content accepted in URL mode: %v", errs)
	}
	got := k.Fallback(spec, "r")
	for _, want := range []string{"https://auth.example.com/connect?x=1", "leads to auth.example.com", "Connect your calendar", "tell you when they are done", `values {}`, "declined=true", "do not open or fetch it"} {
		if !strings.Contains(got, want) {
			t.Errorf("URL fallback lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Ask for:") {
		t.Errorf("URL fallback asks for fields:\n%s", got)
	}
}
