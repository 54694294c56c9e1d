// Package stack grows a goroutine's stack ahead of deep work.
//
// A goroutine starts with a small stack. A call that needs more moves the
// stack to one twice the size, copying what it holds at that moment, and
// a kind's JSON Schema validator recurses deep enough to need 32 KiB: a
// submit validated on a connection's reader goroutine moved its stack
// twice, each time deep in the recursion. In a CPU profile of kindserver
// under kindload (memory store, c=50) runtime.newstack was 4-6% of the
// process; BenchmarkSubmitFreshGoroutine shows the cost per submit.
package stack

// Grow makes room for 16 KiB more than the calling goroutine uses now, in
// at most one move, made while the stack is still shallow and cheap to
// copy. A stack that has the room already is not touched. The runtime
// shrinks a stack that stays mostly unused at a GC, so a goroutine that
// grew for one submit does not keep the room while it idles.
//
//go:noinline
func Grow() {
	var room [16 << 10]byte
	touch(room[:])
}

//go:noinline
func touch(b []byte) { b[0] = 1 }
