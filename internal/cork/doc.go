// Package cork sends a batch of WebSocket frames in one socket write.
//
// websocket.Conn flushes every message to its socket, so a cycle's 35
// frames went out in 35 write syscalls, about a fifth of kindserver's CPU
// on the memory store. A connection accepted through a Writer is a Conn:
// its writer corks it for a batch, and the batch leaves in one write. The
// frames and their order are unchanged.
//
// kindserver's connections and kindload's canned floor both write this
// way, so that the floor pays for its socket writes what kindkit pays.
package cork
