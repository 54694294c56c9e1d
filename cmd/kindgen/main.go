// Command kindgen generates the typed Go code of every interaction kind
// declared in spec/interactions. A module names it in go.mod's tool
// directive (go get -tool github.com/kindkit/kindkit/cmd/kindgen) and runs
// it as go tool kindgen, from a //go:generate line that kindgen new writes
// when the module has none; go tool kindgen -h lists its flags.
package main

import (
	"os"

	"github.com/kindkit/kindkit/internal/kindgen"
)

func main() { os.Exit(kindgen.Main(os.Args[1:], os.Stdout, os.Stderr)) }
