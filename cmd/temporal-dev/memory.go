package main

import (
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The dev server's idle heap is small and its start-up garbage large: a lower GC target and a
// soft limit keep the heap near what is live. GOGC and GOMEMLIMIT, when set, win.
const (
	devGCPercent   = 50
	devMemoryLimit = 64 << 20
	// devSoftLimit is the soft memory limit by default: under B4 the live heap peaks near 70 MB
	// and GOGC's doubling took the heap to ~160 MB. At 100 MiB the B4 peak of gateway +
	// temporal-dev fell under 200 MB PSS but B4 lost ~20 % of its turns/s; 115 MiB costs none.
	devSoftLimit = 115 << 20
)

// tuneGC applies the dev server's GC defaults where the environment sets none: the soft limit
// always, the lower GC target and tighter limit only when asked (TEMPORAL_DEV_TUNE_GC=1: they
// halved B4's turns/s). GOMEMLIMIT=off lifts the limit.
func tuneGC() {
	limit := int64(devSoftLimit)
	if os.Getenv("TEMPORAL_DEV_TUNE_GC") == "1" {
		limit = devMemoryLimit
		if os.Getenv("GOGC") == "" {
			debug.SetGCPercent(devGCPercent)
		}
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
	}
}

// secondRelease is when start-up memory is released again: a gateway's own start (namespace,
// search attributes, schedules, first polls) touches server code once, after the ready line.
const secondRelease = 10 * time.Second

// releaseStartupMemory hands the start-up garbage back to the OS once the server is up,
// instead of leaving it to the background scavenger's slow pace, and the executable's pages
// start-up read; once more when its first clients have started.
func releaseStartupMemory(logger *slog.Logger, dropPages bool) {
	for i, wait := range []time.Duration{0, secondRelease} {
		time.Sleep(wait) // a point in the server's life, not a wait for an event
		debug.FreeOSMemory()
		if dropPages {
			dropStartupPages(logger)
		}
		logger.Debug("released start-up memory", "pass", i+1)
	}
}

// dropStartupPages lets go of the executable's read-only pages that start-up touched: the server's
// 150 MB binary is mostly init code and tables read once, and its resident pages count in RSS although
// the kernel could drop them. Clean private pages only (no "w"): they fault back from the page cache
// on next use, so nothing is lost but a minor fault.
func dropStartupPages(logger *slog.Logger) {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	dropped := 0
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[5] != exe || strings.Contains(f[1], "w") {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil || end <= start {
			continue
		}
		// By address: the range is the runtime's own mapping, never a Go object.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_DONTNEED); errno != 0 {
			logger.Debug("could not drop start-up pages", "range", f[0], "error", errno)
			continue
		}
		dropped += int(end - start)
	}
	logger.Debug("dropped the executable's start-up pages", "bytes", dropped)
}
