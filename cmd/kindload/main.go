// Command kindload puts a Rich Interactions server under load and measures
// it: latency, CPU per cycle, memory and goroutines per parked
// interaction; with -canned it serves the same frames with no logic, the
// floor to compare with. kindload -h lists the flags.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/kindkit/kindkit/internal/kindload"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := kindload.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
