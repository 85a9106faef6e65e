package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/cliapps"
	"github.com/nanobot-durable/nanobot/cliapps/cliappspeer"
)

// greetScript is an installed app: it prints its arguments, whatever key
// reached its environment and the parent of its working folder's files,
// writes an artifact, complains on stderr, and sleeps when asked.
const greetScript = `#!/bin/sh
[ "$1" = sleep ] && exec sleep 30
echo "args: $*"
echo "key: ${OPENAI_API_KEY:-none}"
echo "record: $(cat "$RECORD" 2>/dev/null || echo unreadable)"
printf 'x' > chart.png
echo "a warning" >&2
exit 3
`

// installedGreet is a nanobot home with the app "greet" installed (its
// entry point in the home's npm prefix) and the workspace inside the home.
func installedGreet(t *testing.T) (*cliapps.Manager, Env, string) {
	t.Helper()
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	nb := filepath.Join(home, ".nanobot")
	ws := filepath.Join(nb, "workspace")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "out"), 0o755))
	srv := cliappspeer.Start(t, map[string]any{
		"registry.json": map[string]any{"clis": []any{
			map[string]any{"name": "greet", "display_name": "Greet", "entry_point": "greet", "package_manager": "bundled"},
			map[string]any{"name": "other", "entry_point": "other", "npm_package": "other"},
		}},
		"public_registry.json": map[string]any{"clis": []any{}},
	}, nil)
	t.Setenv(cliapps.CatalogEnv, srv.URL)
	m := cliapps.NewManager(nb, ws)
	bin := filepath.Join(m.Dir, "npm", "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "greet"), []byte(greetScript), 0o755))
	_, err = m.Install(context.Background(), "greet")
	require.NoError(t, err)
	t.Setenv("OPENAI_API_KEY", "sk-not-for-apps")
	t.Setenv("RECORD", filepath.Join(m.Dir, "installed.json"))
	return m, Env{Workspace: ws, RestrictToWorkspace: true, SessionKey: "cli:test", CallID: "c1", Turn: "t1"}, nb
}

func TestRunCLIApp(t *testing.T) {
	m, env, _ := installedGreet(t)
	opts := DefaultExecOptions()
	opts.AllowedEnvKeys = []string{"RECORD"}
	r := NewRegistry()
	r.Register(NewRunCLIApp(m, opts, 0))
	def := r.Definitions()[0]
	require.Contains(t, def.Description, "Installed Settings CLI Apps: greet.")

	res := call(t, r, env, "run_cli_app", map[string]any{"name": "Greet", "args": []any{"hi there", "--x"}, "json": true, "working_dir": "out"})
	require.False(t, res.IsError, res.Text)
	require.Equal(t, `CLI app 'Greet' exited 3.
Command: greet --json 'hi there' --x

STDOUT:
args: --json hi there --x
key: none
record: {
  "schema_version": 1,`, res.Text[:strings.Index(res.Text, `  "apps"`)-1], "argv without a shell, no key in the environment")
	require.Contains(t, res.Text, "\n\nSTDERR:\na warning\n\nArtifacts created or updated:\n- chart.png (previewable image, 1 B)\n\nTo show a preview")
	require.FileExists(t, filepath.Join(env.Workspace, "out", "chart.png"))

	res = call(t, r, env, "run_cli_app", map[string]any{"name": "other"})
	require.Equal(t, "Error: CLI app 'other' is not installed", firstLine(res.Text))
	res = call(t, r, env, "run_cli_app", map[string]any{"name": "git"})
	require.Equal(t, "Error: CLI app 'git' not found", firstLine(res.Text))
	res = call(t, r, env, "run_cli_app", map[string]any{"name": "greet", "working_dir": "/"})
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "outside")
	res = call(t, r, env, "run_cli_app", map[string]any{"name": "greet", "args": []any{"sleep"}, "timeout": 1})
	require.Equal(t, "Error: CLI app timed out after 1s", firstLine(res.Text))
}

// TestRunCLIAppInTheSandbox: the app runs in exec's sandbox; its install
// folder is shown read-only, the rest of nanobot's home (the record, the
// config) stays hidden.
func TestRunCLIAppInTheSandbox(t *testing.T) {
	requireBwrap(t)
	m, env, nb := installedGreet(t)
	opts := DefaultExecOptions()
	opts.AllowedEnvKeys = []string{"RECORD"}
	opts.Sandbox = NewSandbox(SandboxLayout{Workspace: env.Workspace, Hidden: []string{nb}})
	opts.SandboxRequired = true
	t.Cleanup(func() { _ = opts.Sandbox.Close() })
	r := NewRegistry()
	r.Register(NewRunCLIApp(m, opts, 0))
	res := call(t, r, env, "run_cli_app", map[string]any{"name": "greet", "args": []any{"a"}})
	require.False(t, res.IsError, res.Text)
	require.Contains(t, res.Text, "STDOUT:\nargs: a\nkey: none\nrecord: unreadable\n", "installed.json is not shown to the app")
	require.Contains(t, res.Text, "- chart.png (previewable image, 1 B)", "the workspace is writable")
}

func firstLine(s string) string { line, _, _ := strings.Cut(s, "\n"); return line }
