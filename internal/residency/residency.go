// Package residency lets go of the pages of a process's own executable that start-up touched.
//
// A Go binary's text and read-only data are mapped from its file; the init code and tables read once
// at start stay resident and count in RSS, although the kernel could drop them at any time. For
// nanobot's 80 MB binary that is most of an idle gateway's RSS (its own memory is about 14 MB).
// temporal-dev (a nested module, which cannot import this one) keeps a copy of the same few lines.
package residency

import (
	"log/slog"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// DropExecutablePages advises the kernel it may drop the executable's read-only mappings: clean
// private pages (no "w"), which fault back from the page cache on next use, so nothing is lost but a
// minor fault. It returns the bytes advised; 0 where /proc is missing.
func DropExecutablePages(log *slog.Logger) int {
	exe, err := os.Executable()
	if err != nil {
		return 0
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0
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
		// By address: the range is the loader's mapping of the file, never a Go object.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_DONTNEED); errno != 0 {
			log.Debug("could not drop start-up pages", "range", f[0], "error", errno)
			continue
		}
		dropped += int(end - start)
	}
	return dropped
}
