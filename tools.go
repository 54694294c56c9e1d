// Package kindkit is the project root. This file pins the generator's
// dependencies in go.mod; the code lives in the packages below it (see
// README.md). The go generate line is in kinds/doc.go: go generate ./...
// visits packages in import-path order, and kinds comes after every gen/
// package, so a kind whose schema was deleted can have its generated
// package removed without go generate tripping over the missing files.
package kindkit

import (
	_ "github.com/atombender/go-jsonschema/pkg/generator"
	_ "github.com/dave/jennifer/jen"
)
