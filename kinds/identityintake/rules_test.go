package identityintake_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/gen/identityintakegen"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/kinds/identityintake"
	"github.com/kindkit/kindkit/kindtest"
)

const (
	msgNothingGiven = "provide at least one of name/email/phone, or declined=true"
	msgRequired     = "this field is required"
	msgBadEmail     = "must be a valid email address"
	msgBadPhone     = "must be a valid phone number (include your country code, e.g. +1 555 123 4567)"
)

// The spec most tests validate against: PROTOCOL §6.3's canonical example.
const nameEmailPhone = `{"fields":[{"key":"name","required":false},"email",{"key":"phone","required":false,"label":" Mobile "}],"reason":"to send you the quote"}`

func newKind(t testing.TB) kindkit.Kind {
	t.Helper()
	k, err := identityintakegen.New(identityintake.Rules{})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func fe(field, message string) kindkit.FieldError {
	return kindkit.FieldError{Field: field, Message: message}
}

func TestParseRaise(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		args       string
		wantSpec   string
		wantReason string
	}{
		"protocol canonical spec": {
			args:       nameEmailPhone,
			wantSpec:   `{"fields":[{"key":"name","required":false},{"key":"email","required":true},{"key":"phone","required":false,"label":"Mobile"}]}`,
			wantReason: "to send you the quote",
		},
		"string shorthand is required": {
			args:     `{"fields":["name","email","phone"],"reason":"r"}`,
			wantSpec: `{"fields":[{"key":"name","required":true},{"key":"email","required":true},{"key":"phone","required":true}]}`,
		},
		"required defaults to true": {
			args:     `{"fields":[{"key":"name"},{"key":"email","required":"no"},{"key":"phone","required":null}],"reason":"r"}`,
			wantSpec: `{"fields":[{"key":"name","required":true},{"key":"email","required":true},{"key":"phone","required":true}]}`,
		},
		"required false is kept": {
			args:     `{"fields":[{"key":"email","required":false}],"reason":"r"}`,
			wantSpec: `{"fields":[{"key":"email","required":false}]}`,
		},
		"blank label is dropped": {
			args:     `{"fields":[{"key":"email","label":"   "},{"key":"phone","label":""}],"reason":"r"}`,
			wantSpec: `{"fields":[{"key":"email","required":true},{"key":"phone","required":true}]}`,
		},
		"duplicate keys are accepted": {
			args:     `{"fields":["email",{"key":"email","required":false}],"reason":"r"}`,
			wantSpec: `{"fields":[{"key":"email","required":true},{"key":"email","required":false}]}`,
		},
		"reason defaults": {
			args:       `{"fields":["email"]}`,
			wantSpec:   `{"fields":[{"key":"email","required":true}]}`,
			wantReason: kindkit.DefaultReason,
		},
		"reason is trimmed": {
			args:       `{"fields":["email"],"reason":"  to call you back "}`,
			wantSpec:   `{"fields":[{"key":"email","required":true}]}`,
			wantReason: "to call you back",
		},
	}
	k := newKind(t)
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := kindtest.Raise(t, k, tt.args)
			if diff := cmp.Diff(tt.wantSpec, string(r.Spec.JSON)); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if tt.wantReason != "" && r.Reason != tt.wantReason {
				t.Errorf("reason = %q, want %q", r.Reason, tt.wantReason)
			}
		})
	}
}

func TestParseRaiseErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		args string
		want []kindkit.FieldError
	}{
		"fields not an array":             {`{"fields":"email","reason":"r"}`, []kindkit.FieldError{fe("fields", "must be an array, not string")}},
		"fields missing":                  {`{"reason":"r"}`, []kindkit.FieldError{fe("fields", "this field is required")}},
		"no fields":                       {`{"fields":[],"reason":"r"}`, []kindkit.FieldError{fe("fields", "must have at least 1 entry (got 0)")}},
		"unknown key, shorthand":          {`{"fields":["email","company"],"reason":"r"}`, []kindkit.FieldError{fe("fields[1].key", "must be one of 'name', 'email', 'phone'")}},
		"unknown key, object":             {`{"fields":[{"key":"Email"}],"reason":"r"}`, []kindkit.FieldError{fe("fields[0].key", "must be one of 'name', 'email', 'phone'")}},
		"key missing":                     {`{"fields":[{"required":true}],"reason":"r"}`, []kindkit.FieldError{fe("fields[0].key", "this field is required")}},
		"entry neither string nor object": {`{"fields":[true],"reason":"r"}`, []kindkit.FieldError{fe("fields[0]", "must be an object, not boolean")}},
		"label not a string":              {`{"fields":[{"key":"phone","label":5}],"reason":"r"}`, []kindkit.FieldError{fe("fields[0].label", "must be a string, not number")}},
		"unknown field property":          {`{"fields":[{"key":"phone","hint":"x"}],"reason":"r"}`, []kindkit.FieldError{fe("fields[0]", "unknown field 'hint'")}},
	}
	k := newKind(t)
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, err := k.ParseRaise([]byte(tt.args))
			var re *kindkit.RaiseError
			if !errors.As(err, &re) {
				t.Fatalf("ParseRaise = %s, %v; want a *kindkit.RaiseError", r.Spec.JSON, err)
			}
			if re.Tool != identityintakegen.ToolName {
				t.Errorf("Tool = %q, want %q", re.Tool, identityintakegen.ToolName)
			}
			if diff := cmp.Diff(tt.want, re.Errors); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	const (
		optionalEmail = `{"fields":[{"key":"email","required":false}]}`
		requiredEmail = `{"fields":["email"]}`
		allRequired   = `{"fields":["name","email","phone"]}`
	)
	tests := map[string]struct {
		spec   string // raise arguments; empty for format-only
		values string
		want   string
		errs   []kindkit.FieldError
	}{
		"protocol submitted example": {
			spec:   nameEmailPhone,
			values: `{"name":"Alice","email":"Alice@EXAMPLE.com","phone":"+1 (555) 123-4567"}`,
			want:   `{"name":"Alice","email":"Alice@example.com","phone":"+15551234567"}`,
		},
		"name is trimmed": {
			spec:   nameEmailPhone,
			values: `{"name":"  Alice Example \t","email":"alice@example.com"}`,
			want:   `{"name":"Alice Example","email":"alice@example.com"}`,
		},
		"blank optional fields are left out": {
			spec:   nameEmailPhone,
			values: `{"name":"   ","email":"a@b.co","phone":""}`,
			want:   `{"email":"a@b.co"}`,
		},
		"unknown keys are ignored": {
			spec:   nameEmailPhone,
			values: `{"email":"a@b.co","company":"Acme","phone_ext":5}`,
			want:   `{"email":"a@b.co"}`,
		},
		"null fields count as absent": {
			spec:   nameEmailPhone,
			values: `{"name":null,"email":"a@b.co","phone":null}`,
			want:   `{"email":"a@b.co"}`,
		},
		"volunteered fields are checked and kept": {
			spec:   requiredEmail,
			values: `{"name":"Bob","email":"bob@example.com","phone":"555.123.4567"}`,
			want:   `{"name":"Bob","email":"bob@example.com","phone":"+15551234567"}`,
		},
		"volunteered fields are checked": {
			spec:   requiredEmail,
			values: `{"email":"bob@example.com","phone":"12345"}`,
			errs:   []kindkit.FieldError{fe("phone", msgBadPhone)},
		},
		"nothing given: empty object": {spec: nameEmailPhone, values: `{}`, errs: []kindkit.FieldError{fe("values", msgNothingGiven)}},
		"nothing given: null":         {spec: nameEmailPhone, values: `null`, errs: []kindkit.FieldError{fe("values", msgNothingGiven)}},
		"nothing given: empty strings": {
			spec:   allRequired,
			values: `{"name":"","email":"","phone":""}`,
			errs:   []kindkit.FieldError{fe("values", msgNothingGiven)},
		},
		"nothing given: only unknown keys": {spec: nameEmailPhone, values: `{"company":"Acme"}`, errs: []kindkit.FieldError{fe("values", msgNothingGiven)}},
		"blank email against an optional email": {
			spec:   optionalEmail,
			values: `{"email":"   "}`,
			want:   `{}`,
		},
		"blank email against a required email": {
			spec:   requiredEmail,
			values: `{"email":"   "}`,
			errs:   []kindkit.FieldError{fe("email", msgRequired)},
		},
		"required fields in spec order": {
			spec:   `{"fields":["phone",{"key":"name","required":false},"email"]}`,
			values: `{"name":"Bob"}`,
			errs:   []kindkit.FieldError{fe("phone", msgRequired), fe("email", msgRequired)},
		},
		"errors ordered required, email, phone": {
			spec:   `{"fields":["phone","email","name"]}`,
			values: `{"name":" ","email":"not-an-email","phone":"12345"}`,
			errs:   []kindkit.FieldError{fe("name", msgRequired), fe("email", msgBadEmail), fe("phone", msgBadPhone)},
		},
		"scenario: not-an-email": {spec: requiredEmail, values: `{"email":"not-an-email"}`, errs: []kindkit.FieldError{fe("email", msgBadEmail)}},
		"scenario: still bad@":   {spec: requiredEmail, values: `{"email":"still bad@"}`, errs: []kindkit.FieldError{fe("email", msgBadEmail)}},
		"scenario: corrected":    {spec: requiredEmail, values: `{"email":"alice@example.com"}`, want: `{"email":"alice@example.com"}`},
		"format-only skips required": {
			values: `{"name":"Bob"}`,
			want:   `{"name":"Bob"}`,
		},
		"format-only still needs something": {values: `{}`, errs: []kindkit.FieldError{fe("values", msgNothingGiven)}},
		"format-only blank email":           {values: `{"email":"   "}`, want: `{}`},
		"format-only checks formats": {
			values: `{"name":"Bob","email":"a@b","phone":"+0123456789"}`,
			errs:   []kindkit.FieldError{fe("email", msgBadEmail), fe("phone", msgBadPhone)},
		},
		"format-only normalises": {
			values: `{"email":" Bob@Example.COM ","phone":"1 555 123 4567"}`,
			want:   `{"email":"Bob@example.com","phone":"+15551234567"}`,
		},
		"values not an object": {values: `"abc"`, errs: []kindkit.FieldError{fe("values", "must be an object, not string")}},
		"value not a string":   {spec: nameEmailPhone, values: `{"email":5}`, errs: []kindkit.FieldError{fe("email", "must be a string, not number")}},
		"values not JSON":      {values: `{"email":`, errs: []kindkit.FieldError{fe("values", "invalid values shape: unexpected end of JSON input at offset 9")}},
	}
	k := newKind(t)
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var spec *kindkit.Spec
			if tt.spec != "" {
				r := kindtest.Raise(t, k, tt.spec)
				spec = &r.Spec
			}
			got, errs := k.Validate(spec, []byte(tt.values))
			if diff := cmp.Diff(tt.errs, errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEmail(t *testing.T) {
	t.Parallel()
	tests := map[string]string{ // input → normalised, "" when rejected
		// §6.3's rejected examples.
		"no-at":     "",
		"@x.com":    "",
		"a@b":       "",
		"a@.com":    "",
		"a@b.":      "",
		"a b@c.com": "",
		"a@b@c.com": "",
		// More of the same rules.
		"a@b..com":                        "",
		"a\t@b.com":                       "",
		"a@b.com\r\nx":                    "",
		"a@":                              "",
		"@":                               "",
		"still bad@":                      "",
		"Alice@EXAMPLE.com":               "Alice@example.com",
		"  x@Y.Z\n":                       "x@y.z",
		"First.Last+Tag@Mail.Example.ORG": "First.Last+Tag@mail.example.org",
		"a@b.c":                           "a@b.c",
		"\"odd\"!#@x-y.com":               "\"odd\"!#@x-y.com",
		"ÄB@ÜNI.DE":                       "ÄB@üni.de",
	}
	k := newKind(t)
	for input, want := range tests {
		t.Run(input, func(t *testing.T) {
			t.Parallel()
			values, _ := json.Marshal(map[string]string{"email": input})
			got, errs := k.Validate(nil, values)
			if want == "" {
				if diff := cmp.Diff([]kindkit.FieldError{fe("email", msgBadEmail)}, errs); diff != "" {
					t.Errorf("errors (-want +got):\n%s", diff)
				}
				return
			}
			wantJSON, _ := json.Marshal(map[string]string{"email": want})
			if len(errs) > 0 || string(got) != string(wantJSON) {
				t.Errorf("Validate = %s, %v; want %s", got, errs, wantJSON)
			}
		})
	}
}

func TestPhone(t *testing.T) {
	t.Parallel()
	type phone struct{ region, input string }
	tests := map[phone]string{ // → E.164, "" when rejected; region "" is the default
		// §6.3's example table.
		{"", "+1 (555) 123-4567"}: "+15551234567",
		{"", "555.123.4567"}:      "+15551234567",
		{"", "1 555 123 4567"}:    "+15551234567",
		{"", "+44 7911 123456"}:   "+447911123456",
		{"", "+0123456789"}:       "",
		{"", "12345"}:             "",
		{"", "+1234567890123456"}: "",
		// North American notations, in the default region.
		{"", "(415) 555-2671"}:  "+14155552671",
		{"", "  5551234567  "}:  "+15551234567",
		{"", "(555)1234567"}:    "+15551234567",
		{"", "15551234567"}:     "+15551234567",
		{"", "+1-555-123-4567"}: "+15551234567",
		{"US", "415 555 2671"}:  "+14155552671",
		// International numbers in any region, by "+", "00" or "011".
		{"", "0044 7911 123456"}:    "+447911123456",
		{"", "011 44 7911 123456"}:  "+447911123456",
		{"", "+49 30 1234567"}:      "+49301234567",
		{"", "+33 6 12 34 56 78"}:   "+33612345678",
		{"", "+81 3-1234-5678"}:     "+81312345678",
		{"", "+91 98765 43210"}:     "+919876543210",
		{"", "+86 138 0013 8000"}:   "+8613800138000",
		{"", "+55 11 91234-5678"}:   "+5511912345678",
		{"", "+61 412 345 678"}:     "+61412345678",
		{"DE", "0044 7911 123456"}:  "+447911123456",
		{"GB", "+1 (415) 555-2671"}: "+14155552671",
		// A trunk prefix after the country code goes where the country
		// drops it and stays where it is part of the number.
		{"", "+44 (0)20 7946 0958"}: "+442079460958",
		{"", "+44 07911 123456"}:    "+447911123456",
		{"", "+39 06 1234 5678"}:    "+390612345678",
		// National notations, read in the region given.
		{"GB", "07911 123456"}:    "+447911123456",
		{"GB", "020 7946 0958"}:   "+442079460958",
		{"DE", "030 1234567"}:     "+49301234567",
		{"DE", "030/1234567"}:     "+49301234567",
		{"FR", "06 12 34 56 78"}:  "+33612345678",
		{"JP", "03-1234-5678"}:    "+81312345678",
		{"IN", "98765 43210"}:     "+919876543210",
		{"AU", "0412 345 678"}:    "+61412345678",
		{"RU", "8 912 345 67 89"}: "+79123456789",
		{"", "07911 123456"}:      "", // a British number, read as American
		// Numbers the country's plan cannot have, and unknown country codes.
		{"", "+1 555 123 456"}:   "", // a digit short
		{"", "+1 555 123 45678"}: "", // a digit over
		{"", "555-1234"}:         "", // a local number, without its area code
		{"", "+12345678"}:        "",
		{"", "+1 212 055 0100"}:  "", // no area code's exchange begins with 0
		{"", "+1 988 555 0100"}:  "", // nor is 988 an area code
		{"GB", "07911 12345"}:    "", // a British mobile, a digit short
		{"", "+999 1234 5678"}:   "",
		{"GB", "07911 1234567"}:  "",
		{"FR", "06 12 34 56 7"}:  "",
		{"", "+ 44 (0) 20"}:      "",
		{"", "+"}:                "",
		// Anything but digits, separators and a leading + is refused, not
		// dropped.
		{"", "555 123\t4567"}:        "",
		{"", "555_123_4567"}:         "",
		{"", "+1 555 CALL NOW"}:      "",
		{"", "+1 415 555 2671 x12"}:  "", // an extension has no E.164 form
		{"", "++15551234567"}:        "",
		{"", "1+5551234567"}:         "",
		{"", "call +44 7911 123456"}: "",
		// Digits of other scripts are digits: full-width ones from a
		// Japanese input method, say.
		{"", "５５５１２３４５６７"}: "+15551234567",
	}
	kinds := map[string]kindkit.Kind{"": newKind(t)}
	for p := range tests {
		if _, ok := kinds[p.region]; !ok {
			k, err := identityintakegen.New(identityintake.Rules{Region: p.region})
			if err != nil {
				t.Fatal(err)
			}
			kinds[p.region] = k
		}
	}
	for p, want := range tests {
		t.Run(p.region+" "+p.input, func(t *testing.T) {
			t.Parallel()
			values, _ := json.Marshal(map[string]string{"phone": p.input})
			got, errs := kinds[p.region].Validate(nil, values)
			if want == "" {
				if diff := cmp.Diff([]kindkit.FieldError{fe("phone", msgBadPhone)}, errs); diff != "" {
					t.Errorf("errors (-want +got):\n%s", diff)
				}
				return
			}
			wantJSON := `{"phone":"` + want + `"}`
			if len(errs) > 0 || string(got) != wantJSON {
				t.Errorf("Validate = %s, %v; want %s", got, errs, wantJSON)
			}
		})
	}
}

func TestCheckRegion(t *testing.T) {
	t.Parallel()
	for _, region := range []string{identityintake.DefaultRegion, "GB", "DE", "IN", "JP"} {
		if err := identityintake.CheckRegion(region); err != nil {
			t.Errorf("CheckRegion(%q) = %v", region, err)
		}
	}
	for _, region := range []string{"", "gb", "XX", "UK", "001"} {
		if err := identityintake.CheckRegion(region); err == nil {
			t.Errorf("CheckRegion(%q) = nil, want an error", region)
		}
	}
}

func TestFallback(t *testing.T) {
	t.Parallel()
	k := newKind(t)
	raise := kindtest.Raise(t, k, `{"fields":[{"key":"phone","required":false},"name","email"],"reason":"to send you the quote"}`)
	var env kindkit.FallbackDirective
	if err := json.Unmarshal([]byte(k.Fallback(raise.Spec, raise.Reason)), &env); err != nil {
		t.Fatal(err)
	}
	if env.Kind != "identity_intake" || env.Mode != "conversational" || env.Reason != "to send you the quote" || string(env.Spec) != string(raise.Spec.JSON) {
		t.Errorf("envelope = %+v", env)
	}
	// The directive's prose is free; these parts of it are not.
	for _, want := range []string{
		"cannot show a form",
		"conversational",
		"phone, name, email",
		"one field at a time",
		"to send you the quote",
		"submit_interaction",
		`kind "identity_intake"`,
		"re-ask",
		"declined=true",
	} {
		if !strings.Contains(env.Instructions, want) {
			t.Errorf("instructions lack %q:\n%s", want, env.Instructions)
		}
	}
}

// TestCatalog checks that kinds.All wires these rules, not the schema alone.
func TestCatalog(t *testing.T) {
	t.Parallel()
	k := kindtest.Kind(t, kinds.All, identityintakegen.Name)
	raise, err := k.ParseRaise([]byte(`{"fields":["email"]}`))
	if err != nil {
		t.Fatalf("catalog kind ParseRaise: %v", err)
	}
	got, errs := k.Validate(&raise.Spec, []byte(`{"email":"Bob@EXAMPLE.com"}`))
	if len(errs) > 0 || string(got) != `{"email":"Bob@example.com"}` {
		t.Errorf("catalog kind Validate = %s, %v", got, errs)
	}
}
