package wstest

import (
	"net"
	"sync/atomic"
)

// CountingListener counts the writes to the connections it accepts: the
// socket writes a server makes, for tests of how it batches its frames.
type CountingListener struct {
	net.Listener
	Writes atomic.Int64
}

func (l *CountingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, &l.Writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}
