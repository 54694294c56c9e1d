package server

// SetFrameHook has f see every frame a connection reads (in) or queues;
// conn identifies the connection. It is for TestMain, before any server
// starts.
func SetFrameHook(f func(conn any, in bool, data []byte)) {
	testHookFrame = func(c *conn, in bool, data []byte) { f(c, in, data) }
}
