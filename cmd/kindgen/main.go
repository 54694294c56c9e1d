// Command kindgen generates the typed Go code of every interaction kind
// declared in spec/interactions. Run it with go generate ./... from the
// project root; kindgen -h lists its flags.
package main

import (
	"os"

	"github.com/kindkit/kindkit/internal/kindgen"
)

func main() { os.Exit(kindgen.Main(os.Args[1:], os.Stdout, os.Stderr)) }
