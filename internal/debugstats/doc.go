// Package debugstats serves a process's memory and goroutine counts as
// JSON at /debug/stats, for the load tool: kindserver and kindload's canned
// floor serve the same, and kindload reads it without linking either.
package debugstats
