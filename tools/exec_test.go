package tools

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
)

// execEnv returns a workspace env and a registry holding exec built with opts.
func execEnv(t *testing.T, opts ExecOptions) (Env, *Registry, *ExecTool) {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ex, err := NewExec(opts)
	require.NoError(t, err)
	r := NewRegistry()
	r.Register(ex)
	return Env{Workspace: ws, RestrictToWorkspace: true, SessionKey: "cli:test", CallID: "c1"}, r, ex
}

func TestExec(t *testing.T) {
	env, r, _ := execEnv(t, DefaultExecOptions())
	require.NoError(t, os.Mkdir(filepath.Join(env.Workspace, "sub"), 0o755))
	for _, tc := range []struct {
		name  string
		args  map[string]any
		want  string
		has   []string
		isErr bool
	}{
		{name: "stdout", args: map[string]any{"command": "echo hello"}, want: "hello\n"},
		{name: "stdout and stderr merged in order", args: map[string]any{"command": "echo a; echo b >&2; echo c"}, want: "a\nb\nc\n"},
		{name: "exit code on failure", args: map[string]any{"command": "echo out; exit 3"}, want: "out\n\nExit code: 3"},
		{name: "exit code without output", args: map[string]any{"command": "exit 7"}, want: "Exit code: 7"},
		{name: "no exit line on success", args: map[string]any{"command": "true"}, want: "(exec completed with no output)"},
		{name: "signal", args: map[string]any{"command": "kill -TERM $$"}, has: []string{"Exit code: 143 (killed by signal terminated)"}},
		{name: "runs in the workspace", args: map[string]any{"command": "pwd"}, want: env.Workspace + "\n"},
		{name: "working_dir inside", args: map[string]any{"command": "pwd", "working_dir": "sub"}, want: filepath.Join(env.Workspace, "sub") + "\n"},
		{name: "working_dir outside refused", args: map[string]any{"command": "pwd", "working_dir": "/"}, has: []string{"outside the workspace"}, isErr: true},
		{name: "working_dir escaping with ..", args: map[string]any{"command": "pwd", "working_dir": "sub/../.."}, has: []string{"outside the workspace"}, isErr: true},
		{name: "working_dir missing", args: map[string]any{"command": "pwd", "working_dir": "nope"}, has: []string{"not an existing directory"}, isErr: true},
		{name: "no stdin", args: map[string]any{"command": "cat"}, want: "(exec completed with no output)"},
		{name: "blocked", args: map[string]any{"command": "rm -rf /"}, want: "Error: Command blocked by safety guard (dangerous pattern detected: recursive or forced rm)" + errorHint, isErr: true},
		{name: "timeout over max rejected", args: map[string]any{"command": "true", "timeout": 601}, has: []string{"Invalid parameters"}, isErr: true},
		{name: "empty command rejected", args: map[string]any{"command": ""}, has: []string{"Invalid parameters"}, isErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, r, env, "exec", tc.args)
			require.Equal(t, tc.isErr, res.IsError, res.Text)
			if tc.want != "" {
				require.Equal(t, tc.want, res.Text)
			}
			for _, h := range tc.has {
				require.Contains(t, res.Text, h)
			}
		})
	}
}

// readPIDs waits until path holds n PIDs (one per line) and returns them.
func readPIDs(t *testing.T, path string, n int) []int {
	t.Helper()
	var pids []int
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pids = pids[:0]
		for _, f := range strings.Fields(string(data)) {
			if p, err := strconv.Atoi(f); err == nil {
				pids = append(pids, p)
			}
		}
		return len(pids) >= n
	}, 5*time.Second, 10*time.Millisecond)
	return pids
}

func requireAllDead(t *testing.T, pids []int) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, p := range pids {
			if testenv.Alive(p) {
				return false
			}
		}
		return true
	}, 5*time.Second, 20*time.Millisecond, "processes still alive: %v", pids)
}

// The command's children each record their PID, then the command hangs.
const groupCommand = "sleep 30 & echo $! > pids; sleep 30 & echo $! >> pids; echo $$ >> pids; wait"

func TestExecTimeoutKillsProcessGroup(t *testing.T) {
	env, r, _ := execEnv(t, DefaultExecOptions())
	start := time.Now()
	res := call(t, r, env, "exec", map[string]any{"command": groupCommand, "timeout": 1})
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "Error: Command timed out after 1 seconds; its process group was killed")
	require.Less(t, time.Since(start), 10*time.Second)
	pids := readPIDs(t, filepath.Join(env.Workspace, "pids"), 3)
	requireAllDead(t, pids)
}

func TestExecContextCancelKillsProcessGroup(t *testing.T) {
	env, _, ex := execEnv(t, DefaultExecOptions())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result, 1)
	go func() { done <- ex.Run(ctx, env, map[string]any{"command": groupCommand}) }()
	pids := readPIDs(t, filepath.Join(env.Workspace, "pids"), 3)
	cancel()
	select {
	case res := <-done:
		require.True(t, res.IsError)
		require.Contains(t, res.Text, "Command cancelled")
	case <-time.After(10 * time.Second):
		t.Fatal("exec did not return after cancellation")
	}
	requireAllDead(t, pids)
}

func TestExecTimeouts(t *testing.T) {
	t.Run("configured default applies without an argument", func(t *testing.T) {
		env, _, ex := execEnv(t, ExecOptions{Timeout: time.Second})
		res := ex.Run(context.Background(), env, map[string]any{"command": "sleep 20"})
		require.Contains(t, res.Text, "timed out after 1 seconds")
	})
	t.Run("argument capped at MaxTimeout", func(t *testing.T) {
		env, _, ex := execEnv(t, ExecOptions{Timeout: time.Second, MaxTimeout: time.Second})
		start := time.Now()
		res := ex.Run(context.Background(), env, map[string]any{"command": "sleep 20", "timeout": 30})
		require.Contains(t, res.Text, "timed out after 1 seconds")
		require.Less(t, time.Since(start), 10*time.Second)
	})
	t.Run("schema advertises the limits", func(t *testing.T) {
		ex, err := NewExec(ExecOptions{Timeout: 0, MaxTimeout: 90 * time.Second})
		require.NoError(t, err)
		require.Contains(t, string(ex.Parameters()), `"maximum": 90`)
		require.Contains(t, ex.Description(), "default none, max 90")
		ex, err = NewExec(DefaultExecOptions())
		require.NoError(t, err)
		require.Contains(t, string(ex.Parameters()), `"maximum": 600`)
		require.Contains(t, ex.Description(), "default 60, max 600")
	})
	t.Run("a background child holding the pipe does not hang exec", func(t *testing.T) {
		env, _, ex := execEnv(t, DefaultExecOptions())
		start := time.Now()
		res := ex.Run(context.Background(), env, map[string]any{"command": "sleep 30 & echo $! > bg; echo started"})
		require.False(t, res.IsError, res.Text)
		require.Equal(t, "started\n", res.Text)
		require.Less(t, time.Since(start), execWaitDelay+5*time.Second)
		for _, p := range readPIDs(t, filepath.Join(env.Workspace, "bg"), 1) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
}

func TestExecOutputCap(t *testing.T) {
	env, r, _ := execEnv(t, DefaultExecOptions())
	for _, tc := range []struct {
		name, command, head, tail string
	}{
		{name: "head and tail kept", command: "seq 1 20000", head: "1\n2\n3\n", tail: "19999\n20000\n"},
		{name: "exit code survives in the tail", command: "seq 1 20000; exit 4", head: "1\n2\n", tail: "20000\n\nExit code: 4"},
		{name: "huge output, bounded memory", command: "head -c 20000000 /dev/zero | tr '\\0' a; echo; echo END", head: "aaaa", tail: "aaa\nEND\n"},
		{name: "multibyte runes counted as characters", command: "for i in $(seq 1 3000); do printf 'żółw '; done; echo", head: "żółw żółw", tail: "żółw \n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, r, env, "exec", map[string]any{"command": tc.command})
			require.False(t, res.IsError)
			require.True(t, utf8.ValidString(res.Text))
			require.LessOrEqual(t, utf8.RuneCountInString(res.Text), execMaxOutputChars)
			require.GreaterOrEqual(t, utf8.RuneCountInString(res.Text), execMaxOutputChars-10)
			require.Contains(t, res.Text, " chars truncated) ...")
			require.True(t, strings.HasPrefix(res.Text, tc.head), res.Text[:20])
			require.True(t, strings.HasSuffix(res.Text, tc.tail), res.Text[len(res.Text)-20:])
		})
	}
	t.Run("count in the marker", func(t *testing.T) {
		res := call(t, r, env, "exec", map[string]any{"command": "head -c 30000 /dev/zero | tr '\\0' x"})
		require.Contains(t, res.Text, "... (20,0")
	})
}

func TestExecEnvironment(t *testing.T) {
	t.Setenv("NANOBOT_TEST_SECRET", "s3cret")
	t.Setenv("NANOBOT_TEST_ALLOWED", "visible")
	t.Setenv("PATH", "/usr/local/bin:/usr/bin:/bin")
	env, r, _ := execEnv(t, ExecOptions{
		Timeout: 10 * time.Second, AllowedEnvKeys: []string{"NANOBOT_TEST_ALLOWED"},
		PathPrepend: "/opt/pre", PathAppend: "/opt/post",
	})
	res := call(t, r, env, "exec", map[string]any{"command": "env"})
	require.False(t, res.IsError, res.Text)
	require.NotContains(t, res.Text, "s3cret", "secrets stay out of the command's environment")
	require.Contains(t, res.Text, "NANOBOT_TEST_ALLOWED=visible")
	require.Contains(t, res.Text, "PATH=/opt/pre:/usr/local/bin:/usr/bin:/bin:/opt/post\n")
	require.Contains(t, res.Text, "HOME=")
	require.Contains(t, res.Text, "LANG=")
	require.Contains(t, res.Text, "TERM=")
	for _, line := range strings.Split(strings.TrimSpace(res.Text), "\n") {
		key, _, _ := strings.Cut(line, "=")
		switch key {
		case "PATH", "HOME", "LANG", "TERM", "USER", "LOGNAME", "TMPDIR", "TZ", "NANOBOT_TEST_ALLOWED",
			"PWD", "SHLVL", "_", "OLDPWD": // the last four are set by bash itself
		default:
			t.Errorf("unexpected variable %q reached the command", key)
		}
	}
}
