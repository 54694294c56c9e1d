// Package kindload is everything cmd/kindload does: a load generator for a
// server speaking the Rich Interactions protocol (kindkit's kindserver),
// and a canned server that sends the same frames with no logic at all, so
// that every figure measured against kindkit has its floor.
//
// Five modes, chosen by flags (kindload -h lists them all):
//
//   - Cycle mode (the default): -c users run -n cycles in all (or run for
//     -d). Each cycle opens a fresh socket, creates a session that
//     supports ["choice_chips"], sends a message, waits for the
//     interaction_required and the toolCall chunk, submits the card,
//     waits for the eventual_response and closes. It reports cycles/s,
//     errors, order violations (see Checker), the p50/p99/max latency from
//     writing send_message to reading interaction_required and from
//     writing submit_interaction to reading eventual_response, and the
//     server's CPU time per cycle (utime+stime of /proc/PID/stat, in 10 ms
//     ticks, PID from GET /debug/stats on -stats-addr, or -pid) next to
//     kindload's own.
//     The latencies leave the dial out. With -tail each cycle also pings
//     after the eventual_response and checks every event up to the pong,
//     which catches events sent after the terminal one.
//
//   - Hold mode (-hold N): parks N sessions, each on its own open socket
//     (dialled -dial-c at a time), and reads the server's /debug/stats?gc=1
//     and VmRSS before the first socket and once all N are parked: bytes
//     and goroutines per parked interaction. Then it submits every park,
//     waits for each eventual_response, closes every socket, waits up to
//     -settle for the server to let go (but at least -after, say past
//     kindserver's -memory-retention), and measures again: what the
//     server kept after the sessions ended.
//
//   - Reconnect mode (-reconnect N, kindkit only: its parks outlive their
//     socket): parks N sessions as hold mode does, then drops every socket
//     at once (no close handshake), then for each (-dial-c at a time)
//     opens a new socket, sends create_conversation_session with the
//     conversationId and no supports, and expects the reply naming the
//     same conversation with a new sessionId, then the same
//     interaction_required again (same interactionId, the original turn's
//     requestId); it submits the card with the new sessionId and expects
//     the 200 ack and the rest of the turn up to the eventual_response
//     with the original requestId. It reports parked, resumed (every step
//     right), failed with a histogram of the reasons (and, for a reason
//     caused by a frame, that frame), order violations, and the p50/p99
//     from writing the resume's create_conversation_session to reading
//     the card again and from writing submit_interaction to reading
//     eventual_response.
//
//   - Parks mode (-parks N,N… -store DSN -server PATH, kindkit only):
//     fills a SQLite or PostgreSQL store directly (sqlstore.Load, a
//     transaction per -fill-batch parks) up to each N pending parks in
//     turn, each in its own conversation as the demo model parks it
//     (conversation, session, two messages, park), keyed as the server
//     keys them (store.NewID; -fill-ids v4: random, as kindkit did
//     before). At each step it times the due-parks query (ExpiredParks
//     with the engine's batch, with none due and with all due), starts
//     the kindserver binary on the store and times it up to its first 200
//     on /healthz, reads its VmRSS, resumes
//     -resumes parks picked at random as reconnect mode resumes them (new
//     socket, the same card again, submit, the rest of the turn), reads
//     the server's own due-parks latency per tick from /metrics, and
//     stops it (SIGTERM). scripts/parks.sh runs it on both stores.
//
//   - Canned floor (-canned ADDR): serves /ws and /debug/stats on ADDR
//     until SIGINT or SIGTERM. Each connection has kindkit's shape (the
//     reader goroutine plus one writer goroutine draining a queue, each
//     batch in one socket write as kindkit's are, read limit 1 MiB) and
//     replies with canned bytes: the frames kindkit's demo
//     model produces, with fresh random ids, keeping per connection only
//     the turn's requestId.
//
// scripts/load.sh runs every mode against kindserver on each store
// (memory, SQLite, PostgreSQL) and the cycle and hold modes against the
// canned floor, and prints them side by side.
package kindload
