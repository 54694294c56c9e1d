// Package kindgen is the code generator behind cmd/kindgen: it reads every
// spec/interactions/*.schema.json, checks it, and writes the typed Go code of
// each kind into gen/<kind>gen/ and the catalog into kinds/catalog.gen.go.
//
// Everything is generated in memory first; files are written only when every
// schema succeeded, so a failed run leaves the tree as it was.
package kindgen
