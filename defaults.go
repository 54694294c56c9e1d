package kindkit

import (
	"fmt"
	"strconv"
)

// DefaultFallback is the directive of a kind whose rules do not write one:
// the spec as JSON and how to submit.
func DefaultFallback(kind string, spec any, reason string) string {
	return fmt.Sprintf("This channel cannot show the %s card, so ask in conversation (%s) for what this spec describes: %s. "+
		"Then call the submit_interaction tool with kind %q and the values; it checks them and tells you what to re-ask. "+
		"If the visitor refuses, call submit_interaction with declined=true and carry on.",
		kind, reason, marshalString(spec), kind)
}

// DefaultErrorField names a schema error by its top-level property, or
// "values" for the object itself.
func DefaultErrorField(location []string) string {
	if len(location) == 0 {
		return "values"
	}
	return location[0]
}

// Index reads an array index from a schema error location segment.
func Index(seg string) (int, bool) {
	i, err := strconv.Atoi(seg)
	return i, err == nil && i >= 0
}
