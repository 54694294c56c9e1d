// Package identityintake holds the hand-written rules of the identity_intake
// kind: the contact form of spec/interactions/identity-intake.schema.json.
//
// The schema says which fields a form may list and that the values are
// strings. Rules adds what it cannot: the "email" shorthand and the default
// of required, the check that something was given, required fields, the
// email check and its lower-cased domain, the phone number checked against
// its country's numbering plan and written in E.164 form, and the directive
// the model follows when the channel cannot show a form.
//
// Wire the rules to the generated kind with
// identityintakegen.New(identityintake.Rules{}); kinds.All does that for
// every kind. Rules.Region sets the region whose national notation a phone
// number without a country code is read in (US when empty); kindserver's
// -phone-region sets it.
package identityintake
