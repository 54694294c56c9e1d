package debugstats

import (
	"encoding/json"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
)

// Stats is what GET /debug/stats reports, for load tools: with ?gc=1 the
// heap is collected and returned to the OS first, so figures compare.
type Stats struct {
	PID        int    `json:"pid"`
	Goroutines int    `json:"goroutines"`
	HeapInuse  uint64 `json:"heapInuse"`
	HeapAlloc  uint64 `json:"heapAlloc"`
	StackInuse uint64 `json:"stackInuse"`
	Sys        uint64 `json:"sys"`
}

// Handler serves Stats; kindload's canned floor serves the same.
func Handler(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("gc") == "1" {
		runtime.GC()
		debug.FreeOSMemory()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(Stats{PID: os.Getpid(), Goroutines: runtime.NumGoroutine(),
		HeapInuse: m.HeapInuse, HeapAlloc: m.HeapAlloc, StackInuse: m.StackInuse, Sys: m.Sys})
}
