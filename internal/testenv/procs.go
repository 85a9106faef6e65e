package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Alive reports whether pid is a running process: not gone, and not a zombie
// (the init of a container may never reap orphans, and a zombie has stopped running).
func Alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// ProcessesRunning lists the live processes whose command line contains s,
// as "pid: command line": found by what they run, so a process in another
// pid namespace (the sandbox's), whose own $$ means nothing here, is found too.
func ProcessesRunning(t testing.TB, s string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("read /proc: %v", err)
	}
	var out []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		line := strings.ReplaceAll(string(cmdline), "\x00", " ")
		if err != nil || !strings.Contains(line, s) {
			continue
		}
		if pid, err := strconv.Atoi(e.Name()); err == nil && Alive(pid) {
			out = append(out, e.Name()+": "+line)
		}
	}
	return out
}
