package identityintake

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/nyaruka/phonenumbers"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/gen/identityintakegen"
)

// Rules is the identity_intake kind's part that its schema cannot say.
type Rules struct {
	identityintakegen.Unimplemented

	// Region is the region, as an upper-case CLDR code such as "GB" or
	// "DE", whose national notation a phone number without a country code
	// is read in: with "GB", "07911 123456" is +447911123456. Empty means
	// DefaultRegion. A code CheckRegion refuses reads no such number.
	Region string
}

// DefaultRegion is the region of the Rules' zero value: PROTOCOL §6.3 reads
// 10 digits without "+" as a North American number.
const DefaultRegion = "US"

// CheckRegion reports whether region is a code Rules.Region may hold.
func CheckRegion(region string) error {
	if !phonenumbers.GetSupportedRegions()[region] {
		return fmt.Errorf("unknown phone region %q (want an upper-case CLDR region code such as US, GB or DE)", region)
	}
	return nil
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
func (r Rules) Validate(spec *identityintakegen.Spec, values *identityintakegen.Values) (*identityintakegen.Values, []kindkit.FieldError) {
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
	out := &identityintakegen.Values{Name: nonBlank(strings.TrimSpace(raw["name"]))}
	if email := strings.TrimSpace(raw["email"]); email != "" {
		if e, ok := normalizeEmail(email); ok {
			out.Email = &e
		} else {
			errs = append(errs, kindkit.FieldError{Field: "email", Message: msgBadEmail})
		}
	}
	if phone := strings.TrimSpace(raw["phone"]); phone != "" {
		if p, ok := normalizePhone(phone, r.region()); ok {
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

// normalizePhone turns a trimmed phone number into E.164, reading it as
// libphonenumber does: any grouping by spaces, dashes, dots, slashes and
// parentheses; "+" and the country code, or the international prefix ("00",
// or "011" in North America) and the country code, or the national notation
// of region, its trunk prefix included ("07911 123456" in GB, "030 1234567"
// in DE, "1 555 123 4567" in US); a trunk prefix written after the country
// code ("+44 (0)20 …") is dropped where that country drops it, and kept
// where it belongs to the number (Italy's "+39 06 …").
//
// The number must be valid for its country's numbering plan, as
// libphonenumber's metadata has it: the right length for its type and
// area, a known country code. That refuses a missing or extra digit, and
// often a number read in the wrong region, rather than storing a number
// that reaches someone else. North America's area code 555 is let through as
// well: it is never assigned, examples use it (PROTOCOL §6.3's, whose
// results must hold, among them), and it cannot be mistaken for a real
// number. Anything but digits, those separators and a leading "+" is
// refused rather than dropped: an extension ("x12") or a word has no place
// in E.164, and keeping only the digits would store a number the visitor
// did not give.
func normalizePhone(phone, region string) (string, bool) {
	for i, r := range phone {
		if !unicode.IsDigit(r) && !strings.ContainsRune(" -.()/", r) && (r != '+' || i > 0) {
			return "", false
		}
	}
	if p, ok := parsePhone(phone, region); ok {
		return p, true
	}
	// "00" is the international prefix of most of the world, and begins no
	// national number of region when parsing in region failed.
	if rest, ok := strings.CutPrefix(phone, "00"); ok {
		return parsePhone("+"+rest, region)
	}
	return "", false
}

func parsePhone(phone, region string) (string, bool) {
	num, err := phonenumbers.Parse(phone, region)
	if err != nil || !phonenumbers.IsValidNumber(num) && !example(num) {
		return "", false
	}
	return phonenumbers.Format(num, phonenumbers.E164), true
}

// example reports whether num is a North American number in area code
// 555, which is kept for examples and never assigned.
func example(num *phonenumbers.PhoneNumber) bool {
	national := strconv.FormatUint(num.GetNationalNumber(), 10)
	return num.GetCountryCode() == 1 && len(national) == 10 && strings.HasPrefix(national, "555")
}

func (r Rules) region() string {
	if r.Region == "" {
		return DefaultRegion
	}
	return r.Region
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
func (Rules) Fallback(spec *identityintakegen.Spec, reason string) string {
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
