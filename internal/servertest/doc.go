// Package servertest runs a kindkit server inside a test, on a real
// loopback port, and shuts it down when the test ends.
package servertest
