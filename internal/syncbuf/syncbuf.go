// Package syncbuf is a bytes buffer that one goroutine may write while
// another reads it: the log sink and captured output of the tests.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is safe for concurrent use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
