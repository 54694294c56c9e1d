// Acme is kindkit in a module of its own: it requires kindkit, declares a
// kind of its own (poll, in spec/interactions), and serves it beside
// kindkit's built-in kinds, with a host tool that asks a poll.
// docs/own-module.md shows this module's code.
//
//	go run . -script script.json                      # scripted model
//	OPENAI_API_KEY=sk-... go run . -model gpt-4o-mini # a real model
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/agent/openai"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/server"
	"github.com/kindkit/kindkit/store/dsn"
	"github.com/kindkit/kindkit/web"

	"example.com/acme/gen/pollgen"
	acmekinds "example.com/acme/kinds"
)

// catalog is kindkit's built-in kinds and this module's own, in one
// catalog; a kind name or raise tool that both define is an error naming
// both.
func catalog() (*kindkit.Catalog, error) {
	builtin, err := kinds.All()
	if err != nil {
		return nil, err
	}
	mine, err := acmekinds.All()
	if err != nil {
		return nil, err
	}
	return kindkit.Join(builtin.Named("kindkit"), mine.Named("example.com/acme"))
}

// planLunch asks the team to pick the lunch in a poll, and orders it. It
// runs again from its start once the poll is answered, so nothing before
// Ask may have an effect.
func planLunch(ctx context.Context, args struct {
	Day string `json:"day" jsonschema:"the day of the lunch"`
}) (any, error) {
	pick, err := pollgen.Ask(ctx, &pollgen.Spec{Question: "What should we order for " + args.Day + "?", Options: []pollgen.Option{
		{ID: "pizza", Label: "Pizza"}, {ID: "soup", Label: "Soup"}, {ID: "salad", Label: "Salad"},
	}}, "to order the team lunch")
	if errors.Is(err, kindkit.ErrDeclined) || errors.Is(err, kindkit.ErrNoResponse) {
		return "Nobody picked; no lunch is ordered.", nil
	}
	if err != nil {
		return nil, err
	}
	return "Ordered " + pick.Choice + " for " + args.Day + ".", nil
}

// tools are the host's tools that the model may call.
func tools() ([]agent.HostTool, error) {
	lunch, err := agent.NewTool("plan_lunch", "Plan the team lunch of a day: a poll asks what to order.", planLunch)
	if err != nil {
		return nil, err
	}
	return []agent.HostTool{lunch}, nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8789", "address to listen on")
	storeName := flag.String("store", "sqlite:./acme.db", "memory, sqlite:PATH or postgres://…")
	script := flag.String("script", "", "a scripted model's mockLlmScript `FILE`")
	modelName := flag.String("model", "gpt-4o-mini", "without -script: the OpenAI-compatible model ($OPENAI_API_KEY, $OPENAI_BASE_URL)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cat, err := catalog()
	check(err)
	hostTools, err := tools()
	check(err)
	st, closeStore, err := dsn.Open(ctx, *storeName, nil)
	check(err)
	defer closeStore()
	var model agent.Model
	if *script != "" {
		f, err := agent.LoadScript(*script)
		check(err)
		model, err = agent.NewScripted(f.Script)
		check(err)
	} else {
		model, err = openai.New(openai.Config{BaseURL: os.Getenv("OPENAI_BASE_URL"), Model: *modelName, APIKey: os.Getenv("OPENAI_API_KEY")})
		check(err)
	}
	eng, err := agent.NewEngine(agent.Config{Catalog: cat, Store: st, Model: model, Tools: hostTools, KeepParksOnDrain: true})
	check(err)
	srv := server.New(eng, server.Options{})
	mux := http.NewServeMux()
	mux.Handle("/ws", srv)
	mux.Handle("/", web.Handler(cat, web.WithTitle("Acme lunch")))
	ln, err := net.Listen("tcp", *addr)
	check(err)
	fmt.Printf("acme listening on ws://%s/ws (chat page: http://%s/)\n", ln.Addr(), ln.Addr())
	hs := &http.Server{Handler: mux}
	go hs.Serve(ln)
	<-ctx.Done()
	srv.Shutdown(context.Background())
	hs.Shutdown(context.Background())
	eng.Shutdown(context.Background())
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
