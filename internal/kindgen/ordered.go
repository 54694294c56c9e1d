package kindgen

import "github.com/kindkit/kindkit/internal/jsonx"

// object is a JSON object that keeps its keys in document order: the
// schemas kindgen writes keep the authored property order, so the model
// reads a raise tool's parameters, and a form shows its fields, in the
// order the schema's author chose.
type object = jsonx.Object
