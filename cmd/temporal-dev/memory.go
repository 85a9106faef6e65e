package main

import (
	"log/slog"
	"os"
	"runtime/debug"
)

// The dev server's idle heap is small and its start-up garbage large: a lower GC target and a
// soft limit keep the heap near what is live. GOGC and GOMEMLIMIT, when set, win.
const (
	devGCPercent   = 50
	devMemoryLimit = 64 << 20
)

// tuneGC applies the dev server's GC defaults where the environment sets none,
// and only when asked (TEMPORAL_DEV_TUNE_GC=1): their effect under load is not measured yet.
func tuneGC() {
	if os.Getenv("TEMPORAL_DEV_TUNE_GC") != "1" {
		return
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(devGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(devMemoryLimit)
	}
}

// releaseStartupMemory hands the start-up garbage back to the OS once the server is up,
// instead of leaving it to the background scavenger's slow pace.
func releaseStartupMemory(logger *slog.Logger) {
	debug.FreeOSMemory()
	logger.Debug("released start-up memory")
}
