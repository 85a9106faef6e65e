package tools

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/tools/execsession"
)

// nanobot's exec session limits.
const (
	execSessionDefaultYield  = 1000 // ms
	execSessionMaxYield      = 30_000
	execSessionDefaultWait   = 10_000 // ms, write_stdin's wait_timeout_ms
	execSessionMaxWait       = 120_000
	execSessionDefaultOutput = 10_000 // chars
	execSessionMaxOutput     = 50_000
	execSessionMinOutput     = 1000
	execSessionsMax          = 8
	// ExecSessionDefaultIdle is nanobot's idle end (tools.exec.sessionIdleMinutes: 30).
	ExecSessionDefaultIdle = 30 * time.Minute
	// execSessionLinger keeps a finished session answering the call that saw it end, for that call's retries.
	execSessionLinger = 10 * time.Minute
)

// ExecSessions are the workspace host's exec sessions: one supervisor
// each, in a folder of Root (0700, in the state dir, hidden from the sandbox).
type ExecSessions struct {
	// Root holds one folder per session.
	Root string
	// Idle ends a session no call touched for that long; 0 means ExecSessionDefaultIdle.
	Idle time.Duration
	// Max is how many may run at once; 0 means nanobot's 8.
	Max int
}

// NewExecSessions keeps sessions under root (the state dir's "exec-sessions").
func NewExecSessions(root string, idle time.Duration) *ExecSessions {
	return &ExecSessions{Root: root, Idle: idle}
}

func (m *ExecSessions) idle() time.Duration {
	if m.Idle > 0 {
		return m.Idle
	}
	return ExecSessionDefaultIdle
}

func (m *ExecSessions) max() int {
	if m.Max > 0 {
		return m.Max
	}
	return execSessionsMax
}

// sessionID is the session a call starts: derived from the call, so a
// retried exec finds the session its first attempt started.
func sessionID(env Env) string {
	if env.CallID == "" {
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		return hex.EncodeToString(b)
	}
	sum := sha256.Sum256([]byte(env.SessionKey + "\x00" + env.Turn + "\x00" + env.CallID))
	return hex.EncodeToString(sum[:6])
}

// callKey names a call to a supervisor; every attempt of one call shares it.
func callKey(env Env) string {
	if env.CallID == "" {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		return "anon/" + hex.EncodeToString(b)
	}
	return env.Turn + "/" + env.CallID
}

// start runs spec under a new supervisor, or finds the one a first attempt
// of this call started, and polls it.
func (m *ExecSessions) start(ctx context.Context, env Env, spec execsession.Spec, yield time.Duration) (execsession.Reply, error) {
	spec.Idle, spec.Linger, spec.Owner = m.idle(), execSessionLinger, env.SessionKey
	if _, err := os.Stat(filepath.Join(m.Root, spec.ID)); err != nil {
		sessions, err := execsession.List(ctx, m.Root)
		if err != nil {
			return execsession.Reply{}, err
		}
		live := 0
		for _, s := range sessions {
			if s.Ended == nil && !s.Lost && !s.Info.Reported {
				live++
			}
		}
		if live >= m.max() {
			return execsession.Reply{}, fmt.Errorf("maximum exec sessions reached (%d)", m.max())
		}
		exe, err := forwarderBinary() // this binary is the supervisor too
		if err != nil {
			return execsession.Reply{}, err
		}
		if err := execsession.Start(m.Root, exe, spec); err != nil && !errors.Is(err, execsession.ErrExists) {
			return execsession.Reply{}, err
		}
	}
	return execsession.Call(ctx, m.Root, spec.ID, execsession.Request{
		Op: execsession.OpPoll, Key: callKey(env), Owner: env.SessionKey, Yield: yield,
	})
}

// EndOwned ends every session the session key started (/stop, /new) and
// forgets what ended ones left; it returns how many were running.
func (m *ExecSessions) EndOwned(ctx context.Context, owner string) (int, error) {
	if m == nil {
		return 0, nil
	}
	sessions, err := execsession.List(ctx, m.Root)
	if err != nil {
		return 0, err
	}
	ended := 0
	var errs []error
	for _, s := range sessions {
		if s.Info.Owner != owner {
			continue
		}
		if s.Ended != nil || s.Lost {
			execsession.Forget(m.Root, s.ID)
			continue
		}
		if err := execsession.End(ctx, m.Root, s.ID, owner); err != nil && !errors.Is(err, execsession.ErrNotFound) {
			errs = append(errs, err)
			continue
		}
		if s.Info.Running {
			ended++
		}
	}
	return ended, errors.Join(errs...)
}

// sessionOutput is a poll's text as nanobot's format_session_poll writes it.
func sessionOutput(id string, rep execsession.Reply, maxChars int) string {
	output := rep.Stdout
	if rep.Stderr != "" {
		if output != "" {
			output += "\n"
		}
		output += "STDERR:\n" + rep.Stderr
	}
	total := len([]rune(output))
	truncated := int(rep.Lost)
	if total > maxChars {
		output = capHeadTail(output, output, total, maxChars)
		truncated += total - maxChars
	}
	var parts []string
	if output != "" {
		parts = append(parts, output)
	}
	if truncated > 0 {
		parts = append(parts, fmt.Sprintf("(output truncated by %s chars)", thousands(truncated)))
	}
	if rep.TimedOut {
		parts = append(parts, "Error: Command timed out; session was terminated.")
	}
	if rep.Terminated && !rep.TimedOut {
		parts = append(parts, "Session terminated.")
	}
	if rep.StdinClosed {
		parts = append(parts, "Stdin closed.")
	}
	if rep.Done {
		parts = append(parts, fmt.Sprintf("Exit code: %d", rep.ExitCode))
	} else {
		parts = append(parts, "Process running. session_id: "+id)
	}
	elapsed := time.Duration(0)
	if !rep.Info.Started.IsZero() {
		elapsed = max(time.Since(rep.Info.Started), 0)
	}
	parts = append(parts, fmt.Sprintf("Elapsed: %.1fs", elapsed.Seconds()))
	return strings.Join(parts, "\n")
}

// sessionResult is a poll as the model sees it: a timeout is an error, as in nanobot.
func sessionResult(id string, rep execsession.Reply, maxChars int) Result {
	return Result{Text: sessionOutput(id, rep, maxChars), IsError: rep.TimedOut}
}

// endedNote tells the model why a session it asks about is gone.
func endedNote(e *execsession.Ended) string {
	return fmt.Sprintf("exec session %s was ended: no call touched it for %s (tools.exec.sessionIdleMinutes); "+
		"start the command again with exec if you still need it", e.ID, minutes(e.After))
}

func minutes(d time.Duration) string {
	if d%time.Minute == 0 {
		return fmt.Sprintf("%d minutes", int(d/time.Minute))
	}
	return d.String()
}

// clampArg is nanobot's clamp_session_int: def when absent, else within [lo, hi].
func clampArg(args map[string]any, key string, def, lo, hi int) int {
	if _, ok := args[key]; !ok || args[key] == nil {
		return def
	}
	return min(max(IntArg(args, key, def), lo), hi)
}

// outputLimit reads max_output_chars, or its alias max_output_tokens.
func outputLimit(args map[string]any) int {
	key := "max_output_chars"
	if args[key] == nil && args["max_output_tokens"] != nil {
		key = "max_output_tokens"
	}
	return clampArg(args, key, execSessionDefaultOutput, execSessionMinOutput, execSessionMaxOutput)
}

// startSession runs command under a supervisor (in the sandbox when exec
// is sandboxed) and returns its first yield_time_ms of output.
func (t *ExecTool) startSession(ctx context.Context, env Env, command, dir string, timeout time.Duration, args map[string]any) Result {
	sandboxed := t.opts.Sandbox != nil && !t.unsandboxed()
	if sandboxed {
		if err := t.opts.Sandbox.Ready(); err != nil {
			return ErrorResult("Error: the command was not run: tools.exec.sandbox is %q but %v. Commands never run "+
				"outside the sandbox; tell the user to install bubblewrap or turn the sandbox off.", SandboxBwrap, err)
		}
	}
	cmd, err := t.command(ctx, command, dir, sandboxed) // only its argv: the supervisor runs it
	if err != nil {
		return ErrorResult("Error executing command: %v", err)
	}
	spec := execsession.Spec{
		ID: sessionID(env), Command: command, Cwd: dir,
		Argv: append([]string{cmd.Path}, cmd.Args[1:]...), Env: t.environ(), Dir: cmd.Dir, Timeout: timeout,
	}
	yield := time.Duration(clampArg(args, "yield_time_ms", execSessionDefaultYield, 0, execSessionMaxYield)) * time.Millisecond
	rep, err := t.opts.Sessions.start(ctx, env, spec, yield)
	switch {
	case err != nil:
		return ErrorResult("Error executing command: %v", err)
	case rep.Error != "":
		return ErrorResult("Error executing command: %s", rep.Error)
	}
	return sessionResult(spec.ID, rep, outputLimit(args))
}
