package tools

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/secrets"
)

// sandboxedExec is exec in a workspace inside a nanobot home whose
// config.json holds a key, run in the bwrap layout ("bwrap": required).
func sandboxedExec(t *testing.T, program string) (Env, *Registry, string) {
	return sandboxedExecMode(t, program, true)
}

func sandboxedExecMode(t *testing.T, program string, required bool) (Env, *Registry, string) {
	t.Helper()
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	nb := filepath.Join(home, ".nanobot")
	ws := filepath.Join(nb, "workspace")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(nb, "config.json"), []byte(`{"apiKey":"sk-exec-sandbox-key"}`), 0o600))
	opts := DefaultExecOptions()
	opts.Sandbox = NewSandbox(SandboxLayout{Workspace: ws, Hidden: []string{nb}, Network: true, Program: program})
	opts.SandboxRequired = required
	t.Cleanup(func() { _ = opts.Sandbox.Close() })
	ex, err := NewExec(opts)
	require.NoError(t, err)
	r := NewRegistry()
	r.Register(ex)
	if required || opts.Sandbox.Ready() == nil {
		require.Contains(t, ex.Description(), "Commands run in a sandbox")
	} else {
		require.NotContains(t, ex.Description(), "sandbox", "commands run bare: the model is not told otherwise")
	}
	return Env{Workspace: ws, RestrictToWorkspace: true, SessionKey: "cli:test", CallID: "c1", Turn: "turn-1"}, r, nb
}

func TestExecInTheSandbox(t *testing.T) {
	requireBwrap(t)
	env, r, nb := sandboxedExec(t, "")

	res := call(t, r, env, "exec", map[string]any{"command": "cat " + filepath.Join(nb, "config.json")})
	require.NotContains(t, res.Text, "sk-exec-sandbox-key")
	require.Contains(t, res.Text, "No such file or directory")

	res = call(t, r, env, "exec", map[string]any{"command": "echo x > " + filepath.Join(nb, "outside.txt")})
	require.Contains(t, res.Text, "Read-only file system")
	require.NoFileExists(t, filepath.Join(nb, "outside.txt"))

	res = call(t, r, env, "exec", map[string]any{"command": "echo x > inside.txt && pwd && echo $HOME", "working_dir": "sub"})
	require.False(t, res.IsError, res.Text)
	require.Equal(t, filepath.Join(env.Workspace, "sub")+"\n"+env.Workspace+"\n", res.Text)
	require.FileExists(t, filepath.Join(env.Workspace, "sub", "inside.txt"))
}

// A timeout kills everything the sandboxed command started (the pid
// namespace dies with bwrap).
func TestExecSandboxTimeoutKillsEverything(t *testing.T) {
	requireBwrap(t)
	env, r, _ := sandboxedExec(t, "")
	start := time.Now()
	res := call(t, r, env, "exec", map[string]any{"command": "sleep 47.5 & sleep 47.5 & echo started; wait", "timeout": 1})
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "timed out after 1 seconds")
	require.Less(t, time.Since(start), 10*time.Second)
	require.Eventually(t, func() bool { return len(testenv.ProcessesRunning(t, "sleep 47.5")) == 0 }, 5*time.Second, 20*time.Millisecond,
		"sandboxed processes outlived the timeout: %v", testenv.ProcessesRunning(t, "sleep 47.5"))
}

// Where bwrap cannot run, every call is an error result naming the cause
// and nothing runs, sandboxed or not.
func TestExecRefusesWhenTheSandboxCannotRun(t *testing.T) {
	env, r, _ := sandboxedExec(t, filepath.Join(t.TempDir(), "bwrap"))
	for range 2 {
		res := call(t, r, env, "exec", map[string]any{"command": "echo ran > marker"})
		require.True(t, res.IsError)
		require.Contains(t, res.Text, `Error: the command was not run: tools.exec.sandbox is "bwrap" but bwrap is not installed`)
		require.Contains(t, res.Text, "never run outside the sandbox")
		require.NoFileExists(t, filepath.Join(env.Workspace, "marker"))
	}
}

// "auto" where bwrap cannot run: the command runs, and the turn's first
// exec result says, once, that it ran unsandboxed.
func TestExecAutoWithoutBwrapRunsAndWarnsOncePerTurn(t *testing.T) {
	env, r, nb := sandboxedExecMode(t, filepath.Join(t.TempDir(), "no-such-bwrap"), false)
	res := call(t, r, env, "exec", map[string]any{"command": "echo ran > marker && cat " + filepath.Join(nb, "config.json")})
	require.False(t, res.IsError, res.Text)
	require.Equal(t, `{"apiKey":"sk-exec-sandbox-key"}`+"\n\n"+ExecUnsandboxedWarning, res.Text, "it ran with the user's rights")
	require.FileExists(t, filepath.Join(env.Workspace, "marker"))

	res = call(t, r, env, "exec", map[string]any{"command": "echo again"})
	require.Equal(t, "again\n", res.Text, "said once a turn")
	res = call(t, r, env, "exec", map[string]any{"command": "exit 3"})
	require.Equal(t, "Exit code: 3", res.Text)

	next := env
	next.Turn = "turn-2"
	res = call(t, r, next, "exec", map[string]any{"command": "exit 3"})
	require.Equal(t, "Exit code: 3\n\n"+ExecUnsandboxedWarning, res.Text, "the next turn is told again")
	other := env
	other.SessionKey = "telegram:1"
	require.Contains(t, call(t, r, other, "exec", map[string]any{"command": "true"}).Text, ExecUnsandboxedWarning, "and another session")
}

// An allowedEnvKeys variable whose value is a configured secret is not
// passed on; the others are.
func TestExecAllowedEnvKeysHoldingASecretAreDropped(t *testing.T) {
	t.Setenv("NANOBOT_TEST_ALIAS", "sk-aliased-provider-key")
	t.Setenv("NANOBOT_TEST_PLAIN", "plain-value")
	set := secrets.FromConfig(map[string]any{"providers": map[string]any{"x": map[string]any{"apiKey": "sk-aliased-provider-key"}}}, nil)
	env, r, _ := execEnv(t, ExecOptions{Timeout: 10 * time.Second, AllowedEnvKeys: []string{"NANOBOT_TEST_ALIAS", "NANOBOT_TEST_PLAIN"}, Secrets: set})
	res := call(t, r, env, "exec", map[string]any{"command": "env"})
	require.False(t, res.IsError, res.Text)
	require.NotContains(t, res.Text, "sk-aliased-provider-key")
	require.NotContains(t, res.Text, "NANOBOT_TEST_ALIAS")
	require.Contains(t, res.Text, "NANOBOT_TEST_PLAIN=plain-value")
}
