package kindkit

import (
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// FieldError is one problem with submitted values or raise arguments. Field
// uses the kind's own keys (an identity field's key, a choices question's
// header, "values" for the whole object).
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// RaiseError is a raise whose arguments break the kind's schema or rules. Its
// text is written for the model, which reads it as a tool error and retries.
type RaiseError struct {
	Tool   string
	Errors []FieldError
}

func (e *RaiseError) Error() string {
	var b strings.Builder
	if e.Tool == "" {
		b.WriteString("invalid spec: ") // a kind only host code asks
	} else {
		fmt.Fprintf(&b, "invalid arguments for %s: ", e.Tool)
	}
	for i, fe := range e.Errors {
		if i > 0 {
			b.WriteString("; ")
		}
		if fe.Field != "" {
			b.WriteString(fe.Field)
			b.WriteString(": ")
		}
		b.WriteString(fe.Message)
	}
	b.WriteString(". Fix the arguments and call the tool again.")
	return b.String()
}

var printer = message.NewPrinter(language.English)

// schemaErrors flattens a jsonschema validation error into its leaves as
// (instance location, message) pairs, ordered by location (array indexes by
// number, an object before its members) since the validator visits
// properties in map order. A Required error becomes one entry per missing
// property, located at that property.
func schemaErrors(err error, emit func(location []string, msg string)) {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		emit(nil, err.Error())
		return
	}
	type leaf struct {
		loc []string
		msg string
	}
	var leaves []leaf
	add := func(loc []string, msg string) { leaves = append(leaves, leaf{loc, msg}) }
	defer func() {
		sort.SliceStable(leaves, func(i, j int) bool { return lessLocation(leaves[i].loc, leaves[j].loc) })
		for _, l := range leaves {
			emit(l.loc, l.msg)
		}
	}()
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		if req, ok := e.ErrorKind.(*kind.Required); ok {
			for _, m := range req.Missing {
				add(append(e.InstanceLocation[:len(e.InstanceLocation):len(e.InstanceLocation)], m), "this field is required")
			}
			return
		}
		add(e.InstanceLocation, schemaMessage(e.ErrorKind))
	}
	walk(ve)
}

func lessLocation(a, b []string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] == b[i] {
			continue
		}
		ai, aNum := Index(a[i])
		bi, bNum := Index(b[i])
		if aNum && bNum {
			return ai < bi
		}
		return a[i] < b[i]
	}
	return len(a) < len(b)
}

// schemaMessage words a schema error for a person or a model, without the
// keyword jargon of the validator's own messages.
func schemaMessage(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return fmt.Sprintf("must be %s, not %s", article(k.Want), k.Got)
	case *kind.AdditionalProperties:
		return fmt.Sprintf("unknown field %s", quoteList(k.Properties))
	case *kind.MinItems:
		return fmt.Sprintf("must have at least %d %s (got %d)", k.Want, plural(k.Want, "entry", "entries"), k.Got)
	case *kind.MaxItems:
		return fmt.Sprintf("must have at most %d %s (got %d)", k.Want, plural(k.Want, "entry", "entries"), k.Got)
	case *kind.MinLength:
		return fmt.Sprintf("must be at least %d %s long", k.Want, plural(k.Want, "character", "characters"))
	case *kind.MaxLength:
		return fmt.Sprintf("must be at most %d %s long (got %d)", k.Want, plural(k.Want, "character", "characters"), k.Got)
	case *kind.Minimum:
		return "must be at least " + k.Want.FloatString(rationalDigits(k.Want))
	case *kind.Maximum:
		return "must be at most " + k.Want.FloatString(rationalDigits(k.Want))
	case *kind.ExclusiveMinimum:
		return "must be more than " + k.Want.FloatString(rationalDigits(k.Want))
	case *kind.ExclusiveMaximum:
		return "must be less than " + k.Want.FloatString(rationalDigits(k.Want))
	case *kind.Pattern:
		return fmt.Sprintf("must match the pattern %s", k.Want)
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = fmt.Sprint(w)
		}
		return "must be one of " + quoteList(want)
	}
	return k.LocalizedString(printer)
}

// rationalDigits is how many decimals a bound needs: none for integers.
func rationalDigits(r *big.Rat) int {
	if r.IsInt() {
		return 0
	}
	return 6
}

func article(types []string) string {
	out := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "object", "array", "integer":
			out[i] = "an " + t
		case "null":
			out[i] = "null"
		default:
			out[i] = "a " + t
		}
	}
	return strings.Join(out, " or ")
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = "'" + v + "'"
	}
	return strings.Join(q, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Path renders an instance location the way a model reads it:
// questions[0].header.
func Path(location []string) string {
	var b strings.Builder
	for _, seg := range location {
		if _, err := strconv.Atoi(seg); err == nil {
			b.WriteString("[" + seg + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

// SchemaFieldErrors turns the error of a validation against a schema of a
// kind's own (github.com/santhosh-tekuri/jsonschema/v6), such as the
// requested schema an elicitation carries in its spec, into field errors
// named by DefaultErrorField.
func SchemaFieldErrors(err error) []FieldError {
	var errs []FieldError
	schemaErrors(err, func(loc []string, msg string) {
		errs = append(errs, FieldError{Field: DefaultErrorField(loc), Message: msg})
	})
	return errs
}
