package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/tools/execsession"
)

// sessionEnv is exec with sessions, write_stdin and list_exec_sessions in a
// fresh workspace, their state in a folder of their own; every supervisor
// left at the end is ended.
func sessionEnv(t *testing.T, idle time.Duration) (Env, *Registry, *ExecSessions) {
	t.Helper()
	opts := DefaultExecOptions()
	sessions := NewExecSessions(filepath.Join(t.TempDir(), "exec-sessions"), idle)
	opts.Sessions = sessions
	env, r, ex := execEnv(t, opts)
	r.Register(NewWriteStdin(sessions, ex))
	r.Register(NewListExecSessions(sessions))
	env.Turn, env.CallID = "turn-1", "start"
	t.Cleanup(func() { endAll(sessions.Root) })
	return env, r, sessions
}

func endAll(root string) {
	list, _ := execsession.List(context.Background(), root)
	for _, s := range list {
		_ = execsession.End(context.Background(), root, s.ID, "")
	}
}

var sessionIDPattern = regexp.MustCompile(`Process running\. session_id: ([0-9a-f]{12})`)

// startSession runs command as a session and returns its id.
func startSession(t *testing.T, r *Registry, env Env, args map[string]any) (string, Result) {
	t.Helper()
	res := call(t, r, env, "exec", args)
	m := sessionIDPattern.FindStringSubmatch(res.Text)
	require.NotNil(t, m, "no session started: %s", res.Text)
	return m[1], res
}

// nextCall is env for the model's next tool call.
func nextCall(env Env, id string) Env {
	env.CallID = id
	return env
}

func TestExecSessionWriteStdin(t *testing.T) {
	env, r, _ := sessionEnv(t, 0)
	id, res := startSession(t, r, env, map[string]any{"command": "bc -q", "yield_time_ms": 200})
	require.False(t, res.IsError, res.Text)

	res = call(t, r, nextCall(env, "c2"), "write_stdin", map[string]any{"session_id": id, "chars": "2+2\n", "wait_for": "4"})
	require.False(t, res.IsError, res.Text)
	require.True(t, strings.HasPrefix(res.Text, "4\n\nProcess running. session_id: "+id+"\nElapsed: "), res.Text)

	res = call(t, r, nextCall(env, "c3"), "list_exec_sessions", nil)
	require.Regexp(t, `^`+id+` \| running \| elapsed=\d+\.\ds \| idle=\d+\.\ds \| remaining=\d+\.\ds \| cwd=`+regexp.QuoteMeta(env.Workspace)+` \| bc -q$`, res.Text)

	res = call(t, r, nextCall(env, "c3b"), "write_stdin", map[string]any{"session_id": id, "chars": "rm -rf /\n"})
	require.True(t, res.IsError)
	require.True(t, strings.HasPrefix(res.Text, "Error: Input blocked by safety guard (dangerous pattern detected: recursive or forced rm)"), res.Text)
	res = call(t, r, nextCall(env, "c4"), "write_stdin", map[string]any{"session_id": id, "chars": "3*3\n", "close_stdin": true, "yield_time_ms": 30000})
	require.Regexp(t, `^9\n\nStdin closed\.\nExit code: 0\nElapsed: \d+\.\ds$`, res.Text)

	res = call(t, r, nextCall(env, "c5"), "write_stdin", map[string]any{"session_id": id})
	require.True(t, res.IsError)
	require.Equal(t, "Error: exec session not found: '"+id+"'"+errorHint, res.Text, "a finished session is gone once its end was told")
	require.Equal(t, "No active exec sessions.", call(t, r, nextCall(env, "c6"), "list_exec_sessions", nil).Text)
}

// A retried write_stdin (same turn and call ID) reads again but does not write again.
func TestExecSessionRetriedWriteWritesOnce(t *testing.T) {
	env, r, _ := sessionEnv(t, 0)
	counter := `n=0; while read l; do n=$((n+1)); echo "$n $l"; done`
	id, _ := startSession(t, r, env, map[string]any{"command": counter, "yield_time_ms": 0})
	first := call(t, r, nextCall(env, "w1"), "write_stdin", map[string]any{"session_id": id, "chars": "once\n", "wait_for": "once"})
	require.True(t, strings.HasPrefix(first.Text, "1 once\n\nProcess running"), first.Text)
	retry := call(t, r, nextCall(env, "w1"), "write_stdin", map[string]any{"session_id": id, "chars": "once\n", "yield_time_ms": 300})
	require.True(t, strings.HasPrefix(retry.Text, "1 once\n\nProcess running"), "the retry sees the first attempt's output, once: %s", retry.Text)
	res := call(t, r, nextCall(env, "w2"), "write_stdin", map[string]any{"session_id": id, "chars": "next\n", "close_stdin": true, "yield_time_ms": 30000})
	require.Regexp(t, `^2 next\n\nStdin closed\.\nExit code: 0`, res.Text, "the retry wrote nothing")

	// A retried exec finds the session its first attempt started.
	id2, _ := startSession(t, r, nextCall(env, "s2"), map[string]any{"command": "cat", "yield_time_ms": 0})
	again, _ := startSession(t, r, nextCall(env, "s2"), map[string]any{"command": "cat", "yield_time_ms": 0})
	require.Equal(t, id2, again)
	list := call(t, r, nextCall(env, "l"), "list_exec_sessions", nil)
	require.Equal(t, 1, strings.Count(list.Text, "| running |"), list.Text)
}

func TestExecSessionOutputCaps(t *testing.T) {
	env, r, _ := sessionEnv(t, 0)
	// 30 000 chars: over the default 10 000, under max_output_chars 50 000.
	cmd := "head -c 30000 /dev/zero | tr '\\0' a; echo"
	res := call(t, r, env, "exec", map[string]any{"command": cmd, "yield_time_ms": 30000})
	require.True(t, strings.Contains(res.Text, "chars truncated) ..."), "no truncation marker")
	require.Contains(t, res.Text, "(output truncated by 20,001 chars)")
	require.LessOrEqual(t, len(strings.SplitN(res.Text, "\n(output truncated", 2)[0]), 10_000)

	res = call(t, r, nextCall(env, "c2"), "exec", map[string]any{"command": cmd, "yield_time_ms": 30000, "max_output_chars": 50000})
	require.NotContains(t, res.Text, "truncated")
	require.Contains(t, res.Text, strings.Repeat("a", 30_000)+"\n")
	require.NotContains(t, res.Text, strings.Repeat("a", 30_001))

	res = call(t, r, nextCall(env, "c3"), "exec", map[string]any{"command": cmd, "yield_time_ms": 30000, "max_output_tokens": 1000})
	require.Contains(t, res.Text, "(output truncated by 29,001 chars)", "max_output_tokens is max_output_chars' alias")

	res = call(t, r, nextCall(env, "c4"), "exec", map[string]any{"command": cmd, "yield_time_ms": 30000, "max_output_chars": 50001})
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "Invalid parameters")

	// More than a ring holds between two polls: the oldest bytes count as truncated.
	big := fmt.Sprintf("read go; head -c %d /dev/zero | tr '\\0' b; echo END; read x", execsession.RingBytes+5000)
	id, _ := startSession(t, r, nextCall(env, "c6"), map[string]any{"command": big, "yield_time_ms": 0})
	res = call(t, r, nextCall(env, "c7"), "write_stdin", map[string]any{"session_id": id, "chars": "go\n", "wait_for": "END", "max_output_chars": 50000})
	lost := execsession.RingBytes + 5000 + len("END\n") - execsession.RingBytes
	want := fmt.Sprintf("(output truncated by %s chars)", thousands(lost+execsession.RingBytes-50_000))
	require.True(t, strings.Contains(res.Text, want), "want %s in …%s", want, lastRunes(res.Text, 200))
}

func TestExecSessionYield(t *testing.T) {
	env, r, _ := sessionEnv(t, 0)
	// A command that ends within the yield returns at its end, as one-shot exec would, with its exit code.
	res := call(t, r, env, "exec", map[string]any{"command": "echo out; echo err >&2; exit 3", "yield_time_ms": 30000})
	require.Regexp(t, `^out\n\nSTDERR:\nerr\n\nExit code: 3\nElapsed: \d+\.\ds$`, res.Text)

	// yield_time_ms 0 returns at once; the output waits for the next poll.
	id, res := startSession(t, r, nextCall(env, "c2"), map[string]any{"command": "sleep 1; echo late; read x", "yield_time_ms": 0})
	require.NotContains(t, res.Text, "late")
	require.Eventually(t, func() bool {
		res = call(t, r, nextCall(env, fmt.Sprintf("p%d", time.Now().UnixNano())), "write_stdin", map[string]any{"session_id": id, "yield_time_ms": 0})
		return strings.HasPrefix(res.Text, "late\n")
	}, 10*time.Second, 20*time.Millisecond)

	// Over the maximum is refused by the schema, like nanobot's.
	res = call(t, r, nextCall(env, "c3"), "write_stdin", map[string]any{"session_id": id, "yield_time_ms": 30001})
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "Invalid parameters")

	res = call(t, r, nextCall(env, "c4"), "write_stdin", map[string]any{"session_id": id, "wait_for": "never", "wait_timeout_ms": 100})
	require.Contains(t, res.Text, "Process running. session_id: "+id)
	require.True(t, strings.HasSuffix(res.Text, "\nWait target not observed: 'never'"), res.Text)
}

func TestExecSessionTerminateEndsTheGroup(t *testing.T) {
	env, r, _ := sessionEnv(t, 0)
	id, _ := startSession(t, r, env, map[string]any{"command": "sleep 1000 & echo $!; wait", "yield_time_ms": 500})
	res := call(t, r, nextCall(env, "c0"), "list_exec_sessions", nil)
	require.Contains(t, res.Text, id+" | running")
	res = call(t, r, nextCall(env, "c1"), "write_stdin", map[string]any{"session_id": id, "terminate": true})
	require.Regexp(t, `Session terminated\.\nExit code: -15\nElapsed: `, res.Text)
	require.False(t, res.IsError)
}

func TestExecSessionTimeoutIsAnError(t *testing.T) {
	env, r, _ := sessionEnv(t, 0)
	id, first := startSession(t, r, env, map[string]any{"command": "echo started; sleep 100", "yield_time_ms": 0, "timeout": 2})
	res := call(t, r, nextCall(env, "c1"), "write_stdin", map[string]any{"session_id": id, "yield_time_ms": 30000})
	require.True(t, res.IsError)
	require.Contains(t, first.Text+res.Text, "started\n", "what it printed before the timeout is kept")
	require.Regexp(t, `(^|\n)Error: Command timed out; session was terminated\.\nExit code: -15\nElapsed: `, res.Text)
}

func TestExecSessionIdleEndIsTold(t *testing.T) {
	env, r, sessions := sessionEnv(t, 300*time.Millisecond)
	id, _ := startSession(t, r, env, map[string]any{"command": "echo $$ > pid; exec sleep 1000", "yield_time_ms": 100})
	pid := readPid(t, filepath.Join(env.Workspace, "pid"))
	require.Eventually(t, func() bool { return syscall.Kill(pid, 0) != nil }, 10*time.Second, 20*time.Millisecond,
		"the idle session's process still runs")
	// The supervisor records the end after the kill: wait for the record, not the process.
	require.Eventually(t, func() bool { _, ok := execsession.ReadEnded(sessions.Root, id); return ok }, 10*time.Second, 20*time.Millisecond)

	res := call(t, r, nextCall(env, "c1"), "list_exec_sessions", nil)
	require.Regexp(t, `^`+id+` \| ended: idle for 300ms \(tools.exec.sessionIdleMinutes\) \| cwd=`, res.Text)
	require.Equal(t, "No active exec sessions.", call(t, r, nextCall(env, "c2"), "list_exec_sessions", nil).Text, "told once")

	id, _ = startSession(t, r, nextCall(env, "c3"), map[string]any{"command": "sleep 1000", "yield_time_ms": 0})
	require.Eventually(t, func() bool { _, ok := execsession.ReadEnded(sessions.Root, id); return ok }, 10*time.Second, 20*time.Millisecond)
	res = call(t, r, nextCall(env, "c4"), "write_stdin", map[string]any{"session_id": id, "chars": "x"})
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "exec session "+id+" was ended: no call touched it for 300ms")
}

func TestExecSessionsBelongToTheirSession(t *testing.T) {
	env, r, sessions := sessionEnv(t, 0)
	id, _ := startSession(t, r, env, map[string]any{"command": "echo $$ > pid; exec sleep 1000", "yield_time_ms": 100})
	other := nextCall(env, "o1")
	other.SessionKey = "cli:other"
	require.Equal(t, "No active exec sessions.", call(t, r, other, "list_exec_sessions", nil).Text)
	res := call(t, r, other, "write_stdin", map[string]any{"session_id": id, "terminate": true})
	require.Contains(t, res.Text, "exec session not found")
	n, err := sessions.EndOwned(context.Background(), "cli:other")
	require.NoError(t, err)
	require.Zero(t, n)

	pid := readPid(t, filepath.Join(env.Workspace, "pid"))
	n, err = sessions.EndOwned(context.Background(), env.SessionKey)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Eventually(t, func() bool { return syscall.Kill(pid, 0) != nil }, 10*time.Second, 20*time.Millisecond)
	require.Equal(t, "No active exec sessions.", call(t, r, nextCall(env, "c2"), "list_exec_sessions", nil).Text)
}

func TestExecSessionsAreCapped(t *testing.T) {
	env, r, sessions := sessionEnv(t, 0)
	sessions.Max = 2
	for i := range 2 {
		startSession(t, r, nextCall(env, fmt.Sprintf("s%d", i)), map[string]any{"command": "sleep 1000", "yield_time_ms": 0})
	}
	res := call(t, r, nextCall(env, "s3"), "exec", map[string]any{"command": "sleep 1000", "yield_time_ms": 0})
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "Error executing command: maximum exec sessions reached (2)")
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		_, err = fmt.Sscan(string(data), &pid)
		return err == nil
	}, 10*time.Second, 20*time.Millisecond)
	return pid
}

// In the sandbox a session's command runs like any exec command, and the
// supervisors' folder (in nanobot's home) is out of its sight.
func TestExecSessionInTheSandbox(t *testing.T) {
	requireBwrap(t)
	env, r, nb := sandboxedExec(t, "")
	ex, ok := r.Get("exec")
	require.True(t, ok)
	sessions := NewExecSessions(filepath.Join(nb, "exec-sessions"), 0)
	ex.(*ExecTool).opts.Sessions = sessions
	r.Register(NewWriteStdin(sessions, ex.(*ExecTool)))
	t.Cleanup(func() { endAll(sessions.Root) })

	id, _ := startSession(t, r, env, map[string]any{"command": "read line; echo got $line; ls " + sessions.Root + "; echo $HOME", "yield_time_ms": 0})
	res := call(t, r, nextCall(env, "c2"), "write_stdin", map[string]any{"session_id": id, "chars": "hi\n", "yield_time_ms": 30000})
	require.Contains(t, res.Text, "got hi\n")
	require.Contains(t, res.Text, "No such file or directory", "the sandbox sees the sessions' folder: %s", res.Text)
	require.Contains(t, res.Text, env.Workspace+"\n", "HOME is the workspace, as for every sandboxed command")
	require.Contains(t, res.Text, "Exit code: 0")
}

// exec and write_stdin run alone in a batch (nanobot's exclusive), list_exec_sessions
// with other read-only calls; the session tools exist only with sessions.
func TestExecSessionToolsAreRegisteredWithTheirFlags(t *testing.T) {
	opts := DefaultExecOptions()
	opts.Sessions = NewExecSessions(t.TempDir(), 0)
	r := NewRegistry()
	require.NoError(t, RegisterBuiltins(r, BuiltinOptions{ExecEnabled: true, Exec: opts}))
	for name, safe := range map[string]bool{"exec": false, "write_stdin": false, "list_exec_sessions": true} {
		tool, ok := r.Get(name)
		require.True(t, ok, name)
		require.Equal(t, safe, tool.Flags().ConcurrencySafe(), name)
	}
	ex, _ := r.Get("exec")
	require.Contains(t, string(ex.Parameters()), `"yield_time_ms"`)
	require.Contains(t, ex.Description(), "pass yield_time_ms")
	require.True(t, r.RetrySafe("exec", `{"command":"bc","yield_time_ms":0}`), "a session's start is keyed by the call")
	require.False(t, r.RetrySafe("exec", `{"command":"bc"}`), "a one-shot command is claimed")
	require.True(t, r.RetrySafe("write_stdin", `{"session_id":"abc"}`))
	require.False(t, r.RetrySafe("list_exec_sessions", `{}`))
	require.Equal(t, "write_stdin 0123456789ab", Hint("write_stdin", `{"session_id":"0123456789ab","chars":"a secret"}`, 40),
		"the hint names the session, not what is typed into it")

	bare := NewRegistry()
	require.NoError(t, RegisterBuiltins(bare, BuiltinOptions{ExecEnabled: true, Exec: DefaultExecOptions()}))
	_, ok := bare.Get("write_stdin")
	require.False(t, ok)
	ex, _ = bare.Get("exec")
	require.NotContains(t, string(ex.Parameters()), "yield_time_ms")
}

// A supervisor killed outright takes its command with it, and the model is told the session is lost.
func TestExecSessionWhoseSupervisorDiedIsLost(t *testing.T) {
	env, r, sessions := sessionEnv(t, 0)
	id, _ := startSession(t, r, env, map[string]any{"command": "echo $$ > pid; exec sleep 1000", "yield_time_ms": 100})
	pid := readPid(t, filepath.Join(env.Workspace, "pid"))
	procs := testenv.ProcessesRunning(t, execsession.Marker+" "+filepath.Join(sessions.Root, id))
	require.Len(t, procs, 1)
	var supervisor int
	_, err := fmt.Sscanf(procs[0], "%d:", &supervisor)
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(supervisor, syscall.SIGKILL))
	require.Eventually(t, func() bool { return syscall.Kill(pid, 0) != nil }, 10*time.Second, 20*time.Millisecond,
		"the command outlived its supervisor")

	res := call(t, r, nextCall(env, "c1"), "list_exec_sessions", nil)
	require.Regexp(t, `^`+id+` \| lost: its supervisor is gone \| cwd=`, res.Text)
	require.Equal(t, "No active exec sessions.", call(t, r, nextCall(env, "c2"), "list_exec_sessions", nil).Text)
	_, err = os.Stat(filepath.Join(sessions.Root, id))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// BenchmarkExecSessionWriteStdin is one write_stdin round trip: a line in,
// its answer waited for and read back, through the supervisor's socket.
func BenchmarkExecSessionWriteStdin(b *testing.B) {
	opts := DefaultExecOptions()
	sessions := NewExecSessions(filepath.Join(b.TempDir(), "exec-sessions"), 0)
	opts.Sessions = sessions
	ex, err := NewExec(opts)
	require.NoError(b, err)
	r := NewRegistry()
	r.Register(ex)
	r.Register(NewWriteStdin(sessions, ex))
	b.Cleanup(func() { endAll(sessions.Root) })
	env := Env{Workspace: b.TempDir(), SessionKey: "cli:bench", Turn: "t", CallID: "start"}
	res := r.Execute(context.Background(), env, "exec", `{"command":"while read l; do echo ok; done","yield_time_ms":0}`)
	id := sessionIDPattern.FindStringSubmatch(res.Text)[1]
	b.ResetTimer()
	for i := range b.N {
		env.CallID = fmt.Sprintf("w%d", i)
		res = r.Execute(context.Background(), env, "write_stdin", `{"session_id":"`+id+`","chars":"x\n","wait_for":"ok"}`)
		if !strings.HasPrefix(res.Text, "ok\n") {
			b.Fatal(res.Text)
		}
	}
}

// BenchmarkExecSessionStart is exec with yield_time_ms for a command that
// ends at once: a supervisor started, the command run, its end read.
func BenchmarkExecSessionStart(b *testing.B) {
	opts := DefaultExecOptions()
	sessions := NewExecSessions(filepath.Join(b.TempDir(), "exec-sessions"), 0)
	opts.Sessions = sessions
	ex, err := NewExec(opts)
	require.NoError(b, err)
	r := NewRegistry()
	r.Register(ex)
	b.Cleanup(func() { endAll(sessions.Root) })
	env := Env{Workspace: b.TempDir(), SessionKey: "cli:bench", Turn: "t"}
	for i := range b.N {
		env.CallID = fmt.Sprintf("s%d", i)
		res := r.Execute(context.Background(), env, "exec", `{"command":"echo hi","yield_time_ms":30000}`)
		if !strings.HasPrefix(res.Text, "hi\n\nExit code: 0") {
			b.Fatal(res.Text)
		}
	}
}
