// Package kindload is everything cmd/kindload does: a load generator for a
// server speaking the Rich Interactions protocol (kindkit's kindserver),
// and a canned server that sends the same frames with no logic at all, so
// that every figure measured against kindkit has its floor.
//
// Three modes, chosen by flags (kindload -h lists them all):
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
//     ticks, PID from GET /debug/stats or -pid) next to kindload's own.
//     The latencies leave the dial out. With -tail each cycle also pings
//     after the eventual_response and checks every event up to the pong,
//     which catches events sent after the terminal one.
//
//   - Hold mode (-hold N): parks N sessions, each on its own open socket
//     (dialled -dial-c at a time), and reads the server's /debug/stats?gc=1
//     and VmRSS before the first socket and once all N are parked: bytes
//     and goroutines per parked interaction. Then it submits every park,
//     waits for each eventual_response, closes every socket, waits up to
//     -settle for the server to let go, and measures again: what the
//     server kept after the sessions ended.
//
//   - Canned floor (-canned ADDR): serves /ws and /debug/stats on ADDR
//     until SIGINT or SIGTERM. Each connection has kindkit's shape (the
//     reader goroutine plus one writer goroutine draining a queue, read
//     limit 1 MiB) and replies with canned bytes: the frames kindkit's demo
//     model produces, with fresh random ids, keeping per connection only
//     the turn's requestId.
//
// scripts/load.sh runs every mode against kindserver and against the
// canned floor and prints the two side by side.
package kindload
