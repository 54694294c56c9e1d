package elicit

import "github.com/kindkit/kindkit/internal/jsonx"

// object is a JSON object that keeps its keys in document order: a form's
// fields are shown in the order of the kind's Values, and encoding/json's
// maps would sort them.
type object = jsonx.Object
