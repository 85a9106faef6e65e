package execsession

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A binary started as Marker is a supervisor; every binary that starts sessions imports this package.
func init() {
	if len(os.Args) == 2 && os.Args[0] == Marker {
		os.Exit(serve(os.Args[1]))
	}
}

// Timing of a supervisor, fixed as nanobot's.
const (
	outputGrace   = 100 * time.Millisecond // a poll that waited gives late output this long
	drainAfterEnd = 2 * time.Second        // output still arriving after the process ended
	killGrace     = 2 * time.Second        // SIGTERM, then SIGKILL
	keysKept      = 64                     // the calls remembered for retries
)

// supervisor is one session: the process, its stdin, its rings, its calls.
type supervisor struct {
	dir  string
	spec Spec
	log  *log.Logger
	ln   net.Listener

	mu          sync.Mutex
	changed     chan struct{} // closed and replaced on new output or the end
	cmd         *exec.Cmd
	stdin       io.WriteCloser
	stdinClosed bool
	out, err    *ring
	drained     [2]int64 // what calls have read of out and err
	started     time.Time
	lastAccess  time.Time
	done        bool
	exitCode    int
	timedOut    bool
	reported    bool
	keys        map[string]*call
	order       []string
	copied      sync.WaitGroup
	quit        chan string // why it leaves: "" (ended by a call or lingered out) or "idle"
	idle        *time.Timer
}

// call is what one tool call did, so its retry repeats the answer, not the effect.
type call struct {
	from        [2]int64
	terminated  bool
	stdinClosed bool
	err         string
}

// serve runs the supervisor of dir; fd 3 is the starter's pipe, told "ready" or why not.
func serve(dir string) int {
	syscall.CloseOnExec(3) // the command must not hold the starter's pipe open
	ready := os.NewFile(3, "ready")
	lf, _ := os.OpenFile(filepath.Join(dir, logFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if lf == nil {
		lf = os.Stderr
	}
	s := &supervisor{dir: dir, log: log.New(lf, "", log.LstdFlags), changed: make(chan struct{}),
		keys: map[string]*call{}, quit: make(chan string, 1)}
	if err := s.start(); err != nil {
		s.log.Printf("start: %v", err)
		_, _ = fmt.Fprintf(ready, "%v", err)
		_ = ready.Close()
		return 1
	}
	_, _ = ready.WriteString("ready")
	_ = ready.Close()
	go s.accept()
	reason := <-s.quit
	s.finish(reason)
	return 0
}

func (s *supervisor) start() error {
	data, err := os.ReadFile(filepath.Join(s.dir, specFile))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, &s.spec); err != nil {
		return fmt.Errorf("%s: %w", specFile, err)
	}
	if len(s.spec.Argv) == 0 {
		return errors.New("no command")
	}
	if s.out, err = openRing(filepath.Join(s.dir, outFile), RingBytes); err != nil {
		return err
	}
	if s.err, err = openRing(filepath.Join(s.dir, errFile), RingBytes); err != nil {
		return err
	}
	if s.ln, err = net.Listen("unix", filepath.Join(s.dir, sockFile)); err != nil {
		return err
	}
	cmd := exec.Command(s.spec.Argv[0], s.spec.Argv[1:]...)
	cmd.Env, cmd.Dir = s.spec.Env, s.spec.Dir
	// Its own process group, so terminate ends everything the shell started;
	// and it dies if the supervisor does, rather than run on out of reach.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if s.stdin, err = cmd.StdinPipe(); err != nil {
		return err
	}
	// Our own pipes: exec's would be closed by Wait while a child the shell left still writes.
	outR, outW, err := os.Pipe()
	if err != nil {
		return err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	err = cmd.Start()
	_, _ = outW.Close(), errW.Close()
	if err != nil {
		return err
	}
	s.cmd = cmd
	s.started, s.lastAccess = time.Now(), time.Now()
	s.copied.Add(2)
	go s.copy(outR, s.out)
	go s.copy(errR, s.err)
	go s.wait()
	if s.spec.Timeout > 0 {
		time.AfterFunc(s.spec.Timeout, s.timeout)
	}
	if s.spec.Idle > 0 {
		s.idle = time.AfterFunc(s.spec.Idle, s.idleEnd)
	}
	return nil
}

// copy moves one stream into its ring until the process and its children close it.
func (s *supervisor) copy(r io.Reader, dst *ring) {
	defer s.copied.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			s.mu.Lock()
			if werr := dst.write(buf[:n]); werr != nil {
				s.log.Printf("ring: %v", werr)
			}
			s.signalLocked()
			s.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

func (s *supervisor) wait() {
	err := s.cmd.Wait()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = -int(ws.Signal()) // as Python reports a signalled process
		}
	}
	s.mu.Lock()
	s.done, s.exitCode = true, code
	s.signalLocked()
	s.mu.Unlock()
}

func (s *supervisor) signalLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *supervisor) timeout() {
	s.mu.Lock()
	running := !s.done
	if running {
		s.timedOut = true
	}
	s.mu.Unlock()
	if running {
		s.kill()
	}
}

// kill ends the process group: SIGTERM, then SIGKILL for what is left.
func (s *supervisor) kill() {
	pgid := s.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.After(killGrace)
	for {
		s.mu.Lock()
		done, changed := s.done, s.changed
		s.mu.Unlock()
		if done {
			break
		}
		select {
		case <-changed:
			continue
		case <-deadline:
		}
		break
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL) // children the shell left behind
}

// idleEnd ends a session no call touched for spec.Idle; one whose end a call saw just goes.
func (s *supervisor) idleEnd() {
	s.mu.Lock()
	reported := s.reported
	s.mu.Unlock()
	if reported {
		s.leave("")
		return
	}
	s.leave("idle")
}

func (s *supervisor) leave(reason string) {
	select {
	case s.quit <- reason:
	default:
	}
}

// finish ends the process if it runs and removes the folder; an idle end
// leaves ended.json so the next call or list tells the model.
func (s *supervisor) finish(reason string) {
	_ = s.ln.Close()
	s.mu.Lock()
	running := !s.done
	s.mu.Unlock()
	if running {
		s.kill()
	}
	if reason != "" {
		info := s.info()
		info.Running = false
		ended, _ := json.Marshal(Ended{Info: info, Reason: reason, After: s.spec.Idle, At: time.Now()})
		tmp := filepath.Join(s.dir, endedFile+".tmp")
		if os.WriteFile(tmp, ended, 0o600) == nil && os.Rename(tmp, filepath.Join(s.dir, endedFile)) == nil {
			for _, f := range []string{sockFile, outFile, errFile, specFile, logFile} {
				_ = os.Remove(filepath.Join(s.dir, f))
			}
			return
		}
	}
	_ = os.RemoveAll(s.dir)
}

func (s *supervisor) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		go s.serveConn(c)
	}
}

func (s *supervisor) serveConn(c net.Conn) {
	defer func() { _ = c.Close() }()
	var req Request
	if err := json.NewDecoder(c).Decode(&req); err != nil {
		return
	}
	var rep Reply
	switch req.Op {
	case OpPoll:
		rep = s.poll(req)
	case OpInfo:
		rep.Info = s.info()
	case OpEnd:
		rep.Info = s.info()
		if req.Owner != "" && req.Owner != s.spec.Owner {
			rep.NotFound = true
			break
		}
		defer s.leave("")
	default:
		rep.Error = "unknown op " + req.Op
	}
	_ = json.NewEncoder(c).Encode(rep)
}

func (s *supervisor) info() Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	info := Info{ID: s.spec.ID, Owner: s.spec.Owner, Command: s.spec.Command, Cwd: s.spec.Cwd,
		Started: s.started, LastAccess: s.lastAccess, Running: !s.done, ExitCode: s.exitCode, Reported: s.reported}
	if s.cmd != nil && s.cmd.Process != nil {
		info.Pid = s.cmd.Process.Pid
	}
	if s.spec.Timeout > 0 {
		info.Deadline = s.started.Add(s.spec.Timeout)
	}
	return info
}

// poll is one write_stdin (or exec's first look): act once per key, wait, read.
func (s *supervisor) poll(req Request) Reply {
	if req.Owner != s.spec.Owner {
		return Reply{NotFound: true}
	}
	s.mu.Lock()
	c, seen := s.keys[req.Key]
	if !seen && s.reported {
		s.mu.Unlock()
		return Reply{NotFound: true} // its end was told to a call: gone, as in nanobot
	}
	s.lastAccess = time.Now()
	if s.idle != nil {
		s.idle.Reset(s.spec.Idle)
	}
	if !seen {
		c = &call{from: s.drained}
		s.remember(req.Key, c)
	}
	s.mu.Unlock()
	if !seen {
		s.act(req, c)
	}
	if c.err != "" {
		return Reply{Error: c.err, Info: s.info()}
	}
	seenWait := s.waitFor(req, c.from)
	s.mu.Lock()
	defer s.mu.Unlock()
	outB, lostOut := s.out.read(c.from[0])
	errB, lostErr := s.err.read(c.from[1])
	if !s.done { // a character cut by the read waits for the next poll
		outB, errB = outB[:completeRunes(outB)], errB[:completeRunes(errB)]
	}
	s.drained[0] = max(s.drained[0], c.from[0]+lostOut+int64(len(outB)))
	s.drained[1] = max(s.drained[1], c.from[1]+lostErr+int64(len(errB)))
	rep := Reply{
		Stdout: string(outB), Stderr: string(errB), Lost: lostOut + lostErr,
		Done: s.done, ExitCode: s.exitCode, TimedOut: s.timedOut,
		Terminated: c.terminated, StdinClosed: c.stdinClosed, WaitSeen: seenWait,
	}
	if s.done && !s.reported {
		s.reported = true
		time.AfterFunc(s.spec.Linger, func() { s.leave("") })
	}
	rep.Info = Info{ID: s.spec.ID, Started: s.started}
	return rep
}

func (s *supervisor) remember(key string, c *call) {
	s.keys[key] = c
	s.order = append(s.order, key)
	if len(s.order) > keysKept {
		delete(s.keys, s.order[0])
		s.order = s.order[1:]
	}
}

// act writes, closes stdin and terminates, as the call asks, once.
func (s *supervisor) act(req Request, c *call) {
	s.mu.Lock()
	done, closed := s.done, s.stdinClosed
	s.mu.Unlock()
	if req.Chars != "" {
		switch {
		case done:
			c.err = "session has already exited"
			return
		case closed:
			c.err = "session stdin is closed"
			return
		}
		if _, err := io.WriteString(s.stdin, req.Chars); err != nil {
			c.err = "session stdin is closed"
			return
		}
	}
	if req.CloseStdin {
		if done {
			c.err = "session has already exited"
			return
		}
		s.mu.Lock()
		s.stdinClosed = true
		s.mu.Unlock()
		_ = s.stdin.Close()
		c.stdinClosed = true
	}
	if req.Terminate {
		s.kill()
		c.terminated = true
	}
}

// waitFor waits as nanobot's poll does: up to the yield while the process
// runs (or until WaitFor shows), then for the end's last output, or briefly
// for output that is on its way. It reports whether WaitFor was seen.
func (s *supervisor) waitFor(req Request, from [2]int64) bool {
	limit := req.Yield
	if req.WaitFor != "" {
		limit = req.WaitTimeout
	}
	deadline := time.Now().Add(limit)
	seen := false
	for {
		s.mu.Lock()
		done, changed := s.done, s.changed
		if req.WaitFor != "" {
			seen = s.containsLocked(from, req.WaitFor)
		}
		s.mu.Unlock()
		if done || seen || !time.Now().Before(deadline) {
			break
		}
		t := time.NewTimer(time.Until(deadline))
		select {
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done {
		waitGroup(&s.copied, drainAfterEnd)
		if req.WaitFor != "" && !seen {
			s.mu.Lock()
			seen = s.containsLocked(from, req.WaitFor)
			s.mu.Unlock()
		}
		return seen
	}
	if limit > 0 && !seen {
		s.waitOutput(from)
	}
	return seen
}

func (s *supervisor) containsLocked(from [2]int64, text string) bool {
	outB, _ := s.out.read(from[0])
	errB, _ := s.err.read(from[1])
	return bytes.Contains(outB, []byte(text)) || strings.Contains(string(errB), text)
}

// waitOutput gives output on its way outputGrace to arrive when none has.
func (s *supervisor) waitOutput(from [2]int64) {
	deadline := time.Now().Add(outputGrace)
	for {
		s.mu.Lock()
		has, changed := s.out.total > from[0] || s.err.total > from[1], s.changed
		s.mu.Unlock()
		if has || !time.Now().Before(deadline) {
			return
		}
		t := time.NewTimer(time.Until(deadline))
		select {
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
}

func waitGroup(wg *sync.WaitGroup, limit time.Duration) {
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	select {
	case <-ch:
	case <-time.After(limit):
	}
}
