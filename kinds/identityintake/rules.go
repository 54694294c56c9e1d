package identityintake

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nyaruka/phonenumbers"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/gen/identityintake"
)

// Rules is the identity_intake kind's part that its schema cannot say.
type Rules struct {
	identityintakegen.Unimplemented
}

var _ identityintakegen.Rules = Rules{}

// Messages of the identity_intake kind, as PROTOCOL §6.3 words them.
const (
	msgNothingGiven = "provide at least one of name/email/phone, or declined=true"
	msgRequired     = "this field is required"
	msgBadEmail     = "must be a valid email address"
	msgBadPhone     = "must be a valid phone number (include your country code, e.g. +1 555 123 4567)"
)

// valueKeys are the keys of the values, in their output order.
var valueKeys = []string{"name", "email", "phone"}

// NormalizeRaise turns raw raise arguments into the spec's shape: a field
// given as a bare key becomes {"key": …, "required": true}, required
// defaults to true when it is missing or not a boolean, and a label is
// trimmed and dropped when blank. An unknown key is left for the schema's
// enum to reject.
func (Rules) NormalizeRaise(args map[string]any) {
	fields, ok := args["fields"].([]any)
	if !ok {
		return
	}
	for i, f := range fields {
		switch field := f.(type) {
		case string:
			fields[i] = map[string]any{"key": field, "required": true}
		case map[string]any:
			if _, ok := field["required"].(bool); !ok {
				field["required"] = true
			}
			if label, ok := field["label"].(string); ok {
				if label = strings.TrimSpace(label); label == "" {
					delete(field, "label")
				} else {
					field["label"] = label
				}
			}
		}
	}
}

// NormalizeValues reads null as no values and keeps only name, email and
// phone of an object: other keys a client or model adds are ignored, and a
// null value counts as absent. Anything else is left for the schema.
func (Rules) NormalizeValues(values any) any {
	if values == nil {
		return map[string]any{}
	}
	obj, ok := values.(map[string]any)
	if !ok {
		return values
	}
	out := map[string]any{}
	for _, key := range valueKeys {
		if v, present := obj[key]; present && v != nil {
			out[key] = v
		}
	}
	return out
}

// Validate checks the values and returns them canonical: the name trimmed,
// the email with its domain lower-cased, the phone in E.164 form, and blank
// fields left out. Without a spec no field is required.
func (Rules) Validate(spec *identityintakegen.IdentityIntakeSpec, values *identityintakegen.IdentityIntakeValues) (*identityintakegen.IdentityIntakeValues, []kindkit.FieldError) {
	raw := map[string]string{"name": deref(values.Name), "email": deref(values.Email), "phone": deref(values.Phone)}
	if raw["name"] == "" && raw["email"] == "" && raw["phone"] == "" {
		// This looks at the strings as sent: "   " is something given.
		return nil, []kindkit.FieldError{{Field: "values", Message: msgNothingGiven}}
	}
	var errs []kindkit.FieldError
	if spec != nil {
		for _, f := range spec.Fields {
			if f.Required && strings.TrimSpace(raw[string(f.Key)]) == "" {
				errs = append(errs, kindkit.FieldError{Field: string(f.Key), Message: msgRequired})
			}
		}
	}
	out := &identityintakegen.IdentityIntakeValues{Name: nonBlank(strings.TrimSpace(raw["name"]))}
	if email := strings.TrimSpace(raw["email"]); email != "" {
		if e, ok := normalizeEmail(email); ok {
			out.Email = &e
		} else {
			errs = append(errs, kindkit.FieldError{Field: "email", Message: msgBadEmail})
		}
	}
	if phone := strings.TrimSpace(raw["phone"]); phone != "" {
		if p, ok := normalizePhone(phone); ok {
			out.Phone = &p
		} else {
			errs = append(errs, kindkit.FieldError{Field: "phone", Message: msgBadPhone})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// normalizeEmail checks a trimmed address: no space, tab, CR or LF; a
// non-empty local part before the first @; a domain with no further @ and at
// least two labels, none empty. It returns the local part unchanged and the
// domain lower-cased.
func normalizeEmail(email string) (string, bool) {
	if strings.ContainsAny(email, " \t\r\n") {
		return "", false
	}
	local, domain, found := strings.Cut(email, "@")
	if !found || local == "" || strings.Contains(domain, "@") {
		return "", false
	}
	labels := strings.Split(domain, ".")
	if len(labels) < 2 || slices.Contains(labels, "") {
		return "", false
	}
	return local + "@" + strings.ToLower(domain), true
}

// normalizePhone turns a trimmed phone number into E.164. Spaces, dashes,
// dots and parentheses are removed (nothing else is). Then "+" must be
// followed by 8 to 15 digits, the first not 0; without "+", 10 digits are a
// North American number and 11 digits starting with 1 already carry the
// country code.
func normalizePhone(phone string) (string, bool) {
	phone = strings.Map(func(r rune) rune {
		if strings.ContainsRune(" -.()", r) {
			return -1
		}
		return r
	}, phone)
	var digits string
	switch rest, plus := strings.CutPrefix(phone, "+"); {
	case plus:
		if len(rest) < 8 || len(rest) > 15 || !allDigits(rest) || rest[0] == '0' {
			return "", false
		}
		digits = rest
	case len(rest) == 10 && allDigits(rest):
		digits = "1" + rest
	case len(rest) == 11 && allDigits(rest) && rest[0] == '1':
		digits = rest
	default:
		return "", false
	}
	return e164(digits), true
}

// e164 formats a number given as its country code and national number
// digits. PROTOCOL §6.3 pins the result to "+" and those digits, so
// libphonenumber formats it only where it agrees: it may not know the
// country code, or may strip a national prefix after it, and neither may
// change what the protocol accepts or returns.
func e164(digits string) string {
	want := "+" + digits
	num, err := phonenumbers.Parse(want, "")
	if err != nil {
		return want
	}
	if got := phonenumbers.Format(num, phonenumbers.E164); got == want {
		return got
	}
	return want
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func nonBlank(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Fallback tells the model to collect the fields in conversation, one at a
// time, and submit them through submit_interaction.
func (Rules) Fallback(spec *identityintakegen.IdentityIntakeSpec, reason string) string {
	var keys, required []string
	if spec != nil {
		for _, f := range spec.Fields {
			key := string(f.Key)
			if !slices.Contains(keys, key) {
				keys = append(keys, key)
			}
			if f.Required && !slices.Contains(required, key) {
				required = append(required, key)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "This channel cannot show a form, so this is a conversational ask. Collect these details from the visitor in conversation, one field at a time, working in why you are asking (%s): %s.", reason, strings.Join(keys, ", "))
	switch {
	case len(required) == 0:
		b.WriteString(" All of them are optional.")
	case len(required) == len(keys):
		b.WriteString(" All of them are required.")
	default:
		fmt.Fprintf(&b, " Required: %s; the visitor may skip the rest.", strings.Join(required, ", "))
	}
	b.WriteString(` Then call the submit_interaction tool with kind "identity_intake" and values { name?, email?, phone? } as the visitor gave them;` +
		" it checks them and tells you what to re-ask." +
		` If the visitor refuses, call submit_interaction with kind "identity_intake" and declined=true, and carry on helping them without it.`)
	return b.String()
}
