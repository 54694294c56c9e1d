// Package kindkit is the project root. This file holds its go generate line
// and pins the generator's dependencies in go.mod; the code lives in the
// packages below it (see README.md).
package kindkit

//go:generate go run ./cmd/kindgen

import (
	_ "github.com/atombender/go-jsonschema/pkg/generator"
	_ "github.com/dave/jennifer/jen"
)
