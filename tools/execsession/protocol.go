// Package execsession runs exec's long-lived sessions: each command runs
// under a small supervisor, this binary re-executed as Marker in a new
// session (setsid), so a worker or gateway restart does not end it. The
// supervisor owns the command's stdin, writes its output into ring files and
// answers one JSON request per connection on a Unix socket, all in a 0700
// folder of the workspace host's state dir that the sandbox never sees.
package execsession

import (
	"time"
)

// Marker is the supervisor's argv[0]; a binary started with it serves the folder named by argv[1].
const Marker = "nanobot-exec-session"

// Files of a session's folder.
const (
	specFile  = "spec.json"
	sockFile  = "sock"
	outFile   = "out.ring"
	errFile   = "err.ring"
	endedFile = "ended.json"
	logFile   = "supervisor.log"
)

// RingBytes is what each output stream keeps between two polls; older
// bytes count as truncated. It holds nanobot's 50 000-character cap.
const RingBytes = 256 << 10

// Spec is what a supervisor runs, written by the worker before it starts.
type Spec struct {
	ID string `json:"id"`
	// Owner is the session key that started it; no other session sees it.
	Owner   string `json:"owner"`
	Command string `json:"command"` // as the model wrote it
	Cwd     string `json:"cwd"`     // as the model sees it
	// Argv, Env and Dir start the process (bash -c, or bwrap around it).
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
	// Timeout ends the process that long after it started (0: never), as exec's timeout does.
	Timeout time.Duration `json:"timeout"`
	// Idle ends a session no call touched for that long (tools.exec.sessionIdleMinutes).
	Idle time.Duration `json:"idle"`
	// Linger keeps a finished session answering the call that saw it finish,
	// so a retried call gets the same answer.
	Linger time.Duration `json:"linger"`
}

// Request operations.
const (
	OpPoll = "poll" // write, close, terminate, then wait and return new output
	OpInfo = "info" // the session's state, for list_exec_sessions
	OpEnd  = "end"  // end the process and remove the session (/stop, /new)
)

// Request is one call to a supervisor.
type Request struct {
	Op string `json:"op"`
	// Key names the tool call; a repeated key (a retried activity) does not
	// write, close or terminate again and reads from where its first attempt did.
	Key   string `json:"key,omitempty"`
	Owner string `json:"owner,omitempty"`

	Chars      string `json:"chars,omitempty"`
	CloseStdin bool   `json:"close_stdin,omitempty"`
	Terminate  bool   `json:"terminate,omitempty"`
	// Yield is how long to wait for output while the process runs.
	Yield time.Duration `json:"yield,omitempty"`
	// WaitFor, when set, returns as soon as the text appears, waiting at most WaitTimeout.
	WaitFor     string        `json:"wait_for,omitempty"`
	WaitTimeout time.Duration `json:"wait_timeout,omitempty"`
}

// Reply is a supervisor's answer.
type Reply struct {
	// NotFound: this session is not the caller's, or its end was already reported.
	NotFound bool `json:"not_found,omitempty"`
	// Error is a refused write ("session has already exited", …).
	Error string `json:"error,omitempty"`

	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	// Lost counts the bytes of output the rings no longer held.
	Lost        int64 `json:"lost,omitempty"`
	Done        bool  `json:"done,omitempty"`
	ExitCode    int   `json:"exit_code,omitempty"`
	TimedOut    bool  `json:"timed_out,omitempty"`
	Terminated  bool  `json:"terminated,omitempty"`
	StdinClosed bool  `json:"stdin_closed,omitempty"`
	WaitSeen    bool  `json:"wait_seen,omitempty"`

	Info Info `json:"info"`
}

// Info describes a session.
type Info struct {
	ID         string    `json:"id"`
	Owner      string    `json:"owner"`
	Command    string    `json:"command"`
	Cwd        string    `json:"cwd"`
	Pid        int       `json:"pid"`
	Started    time.Time `json:"started"`
	LastAccess time.Time `json:"last_access"`
	// Deadline is when the timeout ends it; zero: no timeout.
	Deadline time.Time `json:"deadline"`
	Running  bool      `json:"running"`
	ExitCode int       `json:"exit_code"`
	// Reported: a call saw it finish; it only answers that call's retries now.
	Reported bool `json:"reported,omitempty"`
}

// Ended is what a supervisor leaves behind when it ended a session no call
// ended (idle, or its timeout while nobody polled), so the model is told.
type Ended struct {
	Info
	Reason string        `json:"reason"` // "idle"
	After  time.Duration `json:"after"`  // the idle limit
	At     time.Time     `json:"at"`
}
