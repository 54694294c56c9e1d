// Package kindserver holds everything cmd/kindserver does, so its main is
// one line and its behaviour is testable.
package kindserver
