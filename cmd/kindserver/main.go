// Command kindserver serves kindkit over WebSocket (/ws) and AG-UI (/agui):
// go run ./cmd/kindserver listens on 127.0.0.1:8787 with a built-in demo
// model; -h lists the flags.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/kindkit/kindkit/internal/kindserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := kindserver.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
