package kindkit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// VersionedRules are a kind's rules that name their version. The kind's
// version (Descriptor.Version) is a digest of its schema and this: change
// the string when the rules start to accept or refuse other answers, or
// to canonicalise them otherwise, so that cards asked before the change
// are told apart (docs/adding-a-kind.md, "Changing a kind"). Rules
// without the method have the version "".
type VersionedRules interface {
	Version() string
}

// Upgrader is what a kind's rules implement to take answers to cards that
// an earlier version of the kind asked, once that version is no longer
// served (Catalog.KeepEarlier): Upgrade rewrites the card's spec and the
// answer's values, as that version had them, into this version's types.
// from is the earlier version (Descriptor.Version); values is the answer
// as the card sent it, JSON null when only the card is upgraded. The
// result is checked as if this version had asked and been answered: the
// spec against the Spec schema and CheckSpec, the values against the
// Values schema and Validate. Return an error only when the card itself
// cannot be upgraded (its ask then ends as "kind changed"); values it
// cannot map are better returned as they are, for Validate's field
// errors to tell the person.
//
//	var _ kindkit.Upgrader[pollgen.Spec, pollgen.Values] = Rules{}
type Upgrader[S, V any] interface {
	Upgrade(from string, spec, values json.RawMessage) (*S, *V, error)
}

// ErrNoUpgrade is Kind.Upgrade's error for a kind whose rules declare no
// upgrade of earlier versions (Upgrader).
var ErrNoUpgrade = errors.New("kindkit: the kind declares no upgrade of its earlier versions")

// wording are the schema keywords that change no answer's validity:
// a change to them is no new version of the kind.
var wording = map[string]bool{"title": true, "description": true, "examples": true, "$comment": true}

// kindVersion is the version of a kind whose schema document is doc and
// whose rules name rulesVersion: a digest of what decides which raises
// and answers are valid, the document (its $defs) less its wording and
// x- keys (x-kind, x-ui hints), and of the rules' version.
func kindVersion(doc any, rulesVersion string) string {
	data, err := json.Marshal(stripWording(doc)) // map keys sorted: the same schema, the same bytes
	if err != nil {
		panic(fmt.Sprintf("kindkit: digest a schema: %v", err)) // it came from JSON
	}
	h := sha256.New()
	h.Write(data)
	h.Write([]byte{0})
	h.Write([]byte(rulesVersion))
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// stripWording returns schema s without its wording. Keywords
// whose value maps names to schemas (properties, $defs) are walked by
// name, so that a property named "title" is kept; enum, const and default
// are values, kept as they are.
func stripWording(s any) any {
	m, ok := s.(map[string]any)
	if !ok {
		return s // true, false, or not a schema at all
	}
	out := make(map[string]any, len(m))
	for key, v := range m {
		switch {
		case wording[key] || strings.HasPrefix(key, "x-"):
		case key == "properties" || key == "patternProperties" || key == "$defs" || key == "definitions" || key == "dependentSchemas":
			named, ok := v.(map[string]any)
			if !ok {
				out[key] = v
				continue
			}
			schemas := make(map[string]any, len(named))
			for name, sub := range named {
				schemas[name] = stripWording(sub)
			}
			out[key] = schemas
		case key == "allOf" || key == "anyOf" || key == "oneOf" || key == "prefixItems" || key == "items":
			list, ok := v.([]any)
			if !ok {
				out[key] = stripWording(v) // items as one schema
				continue
			}
			schemas := make([]any, len(list))
			for i, sub := range list {
				schemas[i] = stripWording(sub)
			}
			out[key] = schemas
		case key == "not" || key == "if" || key == "then" || key == "else" || key == "additionalProperties" ||
			key == "contains" || key == "propertyNames" || key == "unevaluatedItems" || key == "unevaluatedProperties" ||
			key == "additionalItems":
			out[key] = stripWording(v)
		default:
			out[key] = v
		}
	}
	return out
}
