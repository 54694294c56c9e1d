// Package starrating holds the rules of the star_rating interaction kind: what
// its schema (spec/interactions) cannot say.
package starrating

import "github.com/kindkit/kindkit/cmd/kindgen/testdata/new/want/gen/starratinggen"

// Rules starts as the schema alone. Write the methods of starratinggen.Rules
// your kind needs (Validate, Fallback, …); the embedded Unimplemented
// covers the rest.
type Rules struct {
	starratinggen.Unimplemented
}

var _ starratinggen.Rules = Rules{}
