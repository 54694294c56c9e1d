// Make writes the old stores TestUpgradeWaitingParks upgrades: a SQLite
// file and a PostgreSQL dump, each holding cards waiting for an answer, as
// a previous kindserver release wrote them, and cards.json, which names
// them. Build that release's kindserver first, then run this from the
// repository's root:
//
//	git worktree add /tmp/kindkit-old 78ea8ef
//	(cd /tmp/kindkit-old && go build -o /tmp/kindserver-old ./cmd/kindserver)
//	go run ./cmd/kindserver/testdata/oldstore/make.go -kindserver /tmp/kindserver-old \
//		-release 78ea8ef -postgres "$KINDKIT_TEST_POSTGRES"
//
// It runs that kindserver with the scripted model of the tests (script.json
// here), parks a turn on a choices card in each of -n conversations, and
// kills the process (SIGKILL) with the cards waiting. The PostgreSQL dump
// is pg_dump's, as INSERTs without psql's meta-commands, so the test can
// restore it without psql.
package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/coder/websocket"
	_ "github.com/jackc/pgx/v5/stdlib"
)

// store is one old store and its waiting cards.
type store struct {
	File  string `json:"file"` // in this directory
	Cards []card `json:"cards"`
}

type card struct {
	ConversationID string `json:"conversationId"`
	InteractionID  string `json:"interactionId"`
}

func main() {
	bin := flag.String("kindserver", "", "the old release's kindserver binary")
	release := flag.String("release", "", "the old release's commit, recorded in cards.json")
	pgAdmin := flag.String("postgres", "", "a PostgreSQL cluster's admin URL, to make a database on")
	n := flag.Int("n", 12, "waiting cards per store")
	flag.Parse()
	if *bin == "" || *release == "" || *pgAdmin == "" {
		log.Fatal("make: -kindserver, -release and -postgres are required")
	}
	dir := "cmd/kindserver/testdata/oldstore"
	out := map[string]any{"release": *release}

	db := filepath.Join(dir, "sqlite.db")
	os.Remove(db)
	out["sqlite"] = store{File: "sqlite.db", Cards: park(*bin, "sqlite:"+db, *n)}
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(db + suffix); err == nil {
			log.Fatalf("make: %s%s is left: the old store's WAL was not checkpointed", db, suffix)
		}
	}

	name := fmt.Sprintf("kindkit_oldstore_%d", time.Now().UnixNano())
	admin, err := sql.Open("pgx", *pgAdmin)
	check(err)
	_, err = admin.Exec("CREATE DATABASE " + name)
	check(err)
	defer admin.Exec("DROP DATABASE " + name + " WITH (FORCE)")
	url := strings.Replace(*pgAdmin, "/postgres?", "/"+name+"?", 1)
	cards := park(*bin, url, *n)
	dump, err := exec.Command("pg_dump", "--inserts", "--no-owner", "--no-privileges", url).Output()
	check(err)
	// pg_dump's \restrict lines are psql's meta-commands, guarding a
	// restore through psql; the test's goes to the server as it is.
	var sqlOnly []string
	for _, line := range strings.SplitAfter(string(dump), "\n") {
		if !strings.HasPrefix(line, `\`) {
			sqlOnly = append(sqlOnly, line)
		}
	}
	check(os.WriteFile(filepath.Join(dir, "postgres.sql"), []byte(strings.Join(sqlOnly, "")), 0o644))
	out["postgres"] = store{File: "postgres.sql", Cards: cards}

	b, err := json.MarshalIndent(out, "", "  ")
	check(err)
	check(os.WriteFile(filepath.Join(dir, "cards.json"), append(b, '\n'), 0o644))
}

// park runs kindserver on dsn, parks n turns, and kills it.
func park(bin, dsn string, n int) []card {
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-store", dsn, "-script", "cmd/kindserver/testdata/oldstore/script.json",
		"-park-timeout", "87600h", "-client-frame-rate", "-1", "-conversation-rate", "-1")
	stdout, err := cmd.StdoutPipe()
	check(err)
	cmd.Stderr = os.Stderr
	check(cmd.Start())
	var url string
	sc := bufio.NewScanner(stdout)
	for url == "" && sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "kindkit listening on "); ok {
			url, _, _ = strings.Cut(rest, " ")
		}
	}
	if url == "" {
		log.Fatal("make: kindserver did not start")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	var cards []card
	for range n {
		cards = append(cards, parkOne(url))
	}
	if strings.HasPrefix(dsn, "sqlite:") {
		// A SIGKILL leaves the WAL beside the file; the test copies one
		// file. Stopped cleanly the store checkpoints it: the cards wait
		// all the same, the process is gone either way.
		check(cmd.Process.Signal(syscall.SIGTERM))
	} else {
		check(cmd.Process.Signal(syscall.SIGKILL))
	}
	cmd.Wait()
	return cards
}

// parkOne opens a conversation and parks its turn on the card.
func parkOne(url string) card {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, nil)
	check(err)
	defer ws.CloseNow()
	send := func(frame string) { check(ws.Write(ctx, websocket.MessageText, []byte(frame))) }
	next := func(typ string) map[string]any {
		for {
			_, b, err := ws.Read(ctx)
			check(err)
			var ev map[string]any
			check(json.Unmarshal(b, &ev))
			if ev["type"] == typ {
				return ev
			}
		}
	}
	send(`{"action":"create_conversation_session","requestId":"r","agentId":"a","supports":["choice_chips"]}`)
	data := next("immediate_response")["data"].(map[string]any)
	var c card
	c.ConversationID = data["conversationId"].(string)
	send(`{"action":"send_message","requestId":"T","sessionId":"` + data["sessionId"].(string) + `","message":"quote"}`)
	c.InteractionID = next("interaction_required")["data"].(map[string]any)["data"].(map[string]any)["interactionId"].(string)
	return c
}

func check(err error) {
	if err != nil {
		log.Fatal("make: ", err)
	}
}
