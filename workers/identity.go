package workers

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// WorkerHostEnv overrides the host part of this process's worker identity
// (a test stands in for another host with it).
const WorkerHostEnv = "NANOBOT_WORKER_HOST"

// identityMark starts the third part of a nanobot process's identity, so
// only nanobot's own pollers are ever judged by the resume scan.
const identityMark = "nanobot-"

// WorkerIdentity is what a poller identity says about the process behind
// it: "<pid>@<host>@nanobot-<start>", where host is the host name and the
// pid namespace (pids compare only within one) and start tells a process
// apart from an earlier one that had the same pid.
type WorkerIdentity struct {
	PID   int
	Host  string
	Start string
}

func (w WorkerIdentity) String() string {
	return fmt.Sprintf("%d@%s@%s%s", w.PID, w.Host, identityMark, w.Start)
}

// ParseIdentity reads a poller identity written by String (with or without
// the agent mark after it); ok is false for anything else.
func ParseIdentity(s string) (WorkerIdentity, bool) {
	parts := strings.SplitN(s, "@", 4)
	if len(parts) < 3 || parts[1] == "" || !strings.HasPrefix(parts[2], identityMark) {
		return WorkerIdentity{}, false
	}
	pid, err := strconv.Atoi(parts[0])
	if err != nil || pid <= 0 {
		return WorkerIdentity{}, false
	}
	return WorkerIdentity{PID: pid, Host: parts[1], Start: strings.TrimPrefix(parts[2], identityMark)}, true
}

// Self is this process's identity, fixed at first use.
var Self = sync.OnceValue(func() WorkerIdentity {
	return WorkerIdentity{PID: os.Getpid(), Host: identityHost(), Start: strconv.FormatInt(time.Now().UnixNano(), 36)}
})

// ProcessIdentity names this process's pollers.
func ProcessIdentity() string { return Self().String() }

func identityHost() string {
	if h := os.Getenv(WorkerHostEnv); h != "" {
		return strings.ReplaceAll(h, "@", "_")
	}
	host, _ := os.Hostname()
	host = strings.ReplaceAll(host, "@", "_")
	// Two containers may share a host name but not their pids.
	if ns, err := os.Readlink("/proc/self/ns/pid"); err == nil {
		host += "~" + strings.Trim(strings.TrimPrefix(ns, "pid:"), "[]")
	}
	return host
}

// processAlive reports whether pid names a live process of this pid
// namespace; a killed process nobody reaped yet (a zombie) is not.
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: the signal said it exists
	}
	// The state follows the parenthesized command name, which may hold spaces.
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}
