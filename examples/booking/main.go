// Booking is kindkit as a library: a support agent whose host tool
// book_demo asks the visitor for a slot through a choices card, and books
// it. The card, its validation, the conversational fallback and the
// durability across restarts are kindkit's; the tool is ten lines.
//
//	go run ./examples/booking -script examples/booking/script.json   # scripted model
//	OPENAI_API_KEY=sk-... go run ./examples/booking -model gpt-4o-mini # a real model
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
	"github.com/kindkit/kindkit/gen/choicesgen"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/server"
	"github.com/kindkit/kindkit/store/sqlstore"
	"github.com/kindkit/kindkit/web"
)

// bookDemo asks for a slot and books it. It runs again from its start
// once the visitor has answered, so everything before Ask is free of
// effects.
func bookDemo(ctx context.Context, args struct {
	Topic string `json:"topic" jsonschema:"what the demo should cover"`
}) (any, error) {
	slot, err := choicesgen.Ask(ctx, &choicesgen.Spec{Questions: []choicesgen.Question{{
		Question: "When should we show you " + args.Topic + "?", Header: "Slot",
		Options: []choicesgen.Option{{Label: "Tue 10:00"}, {Label: "Wed 14:30"}, {Label: "Thu 16:00"}},
	}}}, "to book your demo")
	if errors.Is(err, kindkit.ErrDeclined) || errors.Is(err, kindkit.ErrNoResponse) {
		return "The visitor did not pick a slot; nothing is booked.", nil
	}
	if err != nil {
		return nil, err
	}
	return fmt.Sprintf("Booked a demo of %s on %s.", args.Topic, slot.Answers[0].Options[0]), nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8788", "address to listen on")
	dsn := flag.String("store", "sqlite:./booking.db", "sqlite:PATH or postgres://…")
	script := flag.String("script", "", "a scripted model's mockLlmScript `FILE`")
	modelName := flag.String("model", "gpt-4o-mini", "without -script: the OpenAI-compatible model ($OPENAI_API_KEY, $OPENAI_BASE_URL)")
	lease := flag.Duration("lease-timeout", 0, "how long a resumed turn's lease lasts (0: the engine's default)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	catalog, err := kinds.All()
	check(err)
	st, err := sqlstore.Open(ctx, *dsn)
	check(err)
	defer st.Close()
	tool, err := agent.NewTool("book_demo", "Book a product demo; asks the visitor for a slot.", bookDemo)
	check(err)
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
	eng, err := agent.NewEngine(agent.Config{Catalog: catalog, Store: st, Model: model, Tools: []agent.HostTool{tool},
		KeepParksOnDrain: true, LeaseTimeout: *lease})
	check(err)
	srv := server.New(eng, server.Options{})
	mux := http.NewServeMux()
	mux.Handle("/ws", srv)
	mux.Handle("/", web.Handler(catalog))
	ln, err := net.Listen("tcp", *addr)
	check(err)
	fmt.Printf("booking listening on ws://%s/ws (chat page: http://%s/)\n", ln.Addr(), ln.Addr())
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
