// Package rating holds the rules of the rating interaction kind: what
// its schema (spec/interactions) cannot say.
package rating

import (
	ratinggen "github.com/kindkit/kindkit/gen/rating"
)

// Rules starts as the schema alone. Write the methods of ratinggen.Rules
// your kind needs (Validate, Fallback, …); the embedded UnimplementedRules
// covers the rest.
type Rules struct {
	ratinggen.UnimplementedRules
}

var _ ratinggen.Rules = Rules{}
