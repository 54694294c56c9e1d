package identityintake_test

import (
	"encoding/json"
	"fmt"

	"github.com/kindkit/kindkit/gen/identityintakegen"
	"github.com/kindkit/kindkit/kinds/identityintake"
)

// A raise is read into its canonical spec; the values are checked against it
// and come back normalised: the name trimmed, the email's domain lower-cased
// and the phone number in E.164 form.
func Example() {
	k, err := identityintakegen.New(identityintake.Rules{})
	if err != nil {
		panic(err)
	}
	raise, err := k.ParseRaise([]byte(`{
		"fields": [{"key": "name", "required": false}, "email", {"key": "phone", "required": false, "label": "Mobile"}],
		"reason": "to send you the quote"}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(raise.Spec.JSON))

	values, _ := k.Validate(&raise.Spec, []byte(`{"name": " Alice ", "email": "Alice@EXAMPLE.com", "phone": "+1 (555) 123-4567"}`))
	fmt.Println(string(values))

	_, errs := k.Validate(&raise.Spec, []byte(`{"name": "Alice", "phone": "12345"}`))
	for _, e := range errs {
		fmt.Printf("%s: %s\n", e.Field, e.Message)
	}
	// Output:
	// {"fields":[{"key":"name","required":false},{"key":"email","required":true},{"key":"phone","required":false,"label":"Mobile"}]}
	// {"name":"Alice","email":"Alice@example.com","phone":"+15551234567"}
	// email: this field is required
	// phone: must be a valid phone number (include your country code, e.g. +1 555 123 4567)
}

// On a channel that cannot show a form, the raise tool's result is a
// directive for the model instead of a park.
func Example_fallback() {
	k, err := identityintakegen.New(identityintake.Rules{})
	if err != nil {
		panic(err)
	}
	raise, err := k.ParseRaise([]byte(`{"fields": [{"key": "name", "required": false}, "email"], "reason": "to send you the quote"}`))
	if err != nil {
		panic(err)
	}
	var envelope struct {
		Instructions string `json:"instructions"`
		Mode         string `json:"mode"`
	}
	if err := json.Unmarshal([]byte(k.Fallback(raise.Spec, raise.Reason)), &envelope); err != nil {
		panic(err)
	}
	fmt.Println(envelope.Mode)
	fmt.Println(envelope.Instructions)
	// Output:
	// conversational
	// This channel cannot show a form, so this is a conversational ask. Collect these details from the visitor in conversation, one field at a time, working in why you are asking (to send you the quote): name, email. Required: email; the visitor may skip the rest. Then call the submit_interaction tool with kind "identity_intake" and values { name?, email?, phone? } as the visitor gave them; it checks them and tells you what to re-ask. If the visitor refuses, call submit_interaction with kind "identity_intake" and declined=true, and carry on helping them without it.
}
