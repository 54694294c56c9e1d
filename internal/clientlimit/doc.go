// Package clientlimit bounds what one client may do across its
// connections and requests: a token bucket per client (its principal when
// signed in, its IP address when anonymous). The WebSocket server and the
// AG-UI handler share it, so both wires count alike.
package clientlimit
