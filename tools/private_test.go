package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const privateKey = "sk-private-needle-123"

// privateHome is ~ with ~/.nanobot/{config.json, sessions/, workspace/},
// a workspace symlink to the config, and a file of the user's beside it;
// the file tools run unrestricted, as with restrictToWorkspace off.
func privateHome(t *testing.T) (Env, *Registry, string) {
	t.Helper()
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	nb := filepath.Join(home, ".nanobot")
	ws := filepath.Join(nb, "workspace")
	writeTestFile(t, nb, "config.json", []byte(`{"apiKey": "`+privateKey+`"}`))
	writeTestFile(t, nb, "sessions/cli.jsonl", []byte("needle in a session\n"))
	writeTestFile(t, ws, "notes.md", []byte("needle in the workspace\n"))
	writeTestFile(t, home, "todo.txt", []byte("needle of the user's\n"))
	require.NoError(t, os.Symlink(filepath.Join(nb, "config.json"), filepath.Join(ws, "cfg-link")))
	r := NewRegistry()
	require.NoError(t, RegisterBuiltins(r, BuiltinOptions{ExecEnabled: true, Exec: DefaultExecOptions()}))
	env := Env{Workspace: ws, RestrictToWorkspace: false, SessionKey: "cli:test", CallID: "c1",
		Private: []string{filepath.Join(nb, "config.json"), nb}}
	return env, r, home
}

func TestFileToolsCannotReachTheConfigOrTheHome(t *testing.T) {
	env, r, home := privateHome(t)
	nb := filepath.Join(home, ".nanobot")
	cfg := filepath.Join(nb, "config.json")
	before, err := os.ReadFile(cfg)
	require.NoError(t, err)
	refused := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"read the config", "read_file", map[string]any{"path": cfg}},
		{"read it by ~", "read_file", map[string]any{"path": "../config.json"}},
		{"read it through a symlink in the workspace", "read_file", map[string]any{"path": "cfg-link"}},
		{"read a session", "read_file", map[string]any{"path": filepath.Join(nb, "sessions", "cli.jsonl")}},
		{"list the home", "list_dir", map[string]any{"path": nb}},
		{"grep the config", "grep", map[string]any{"pattern": "sk-", "path": cfg}},
		{"find in the home", "find_files", map[string]any{"pattern": "*.json", "path": nb}},
		{"overwrite the config", "write_file", map[string]any{"path": cfg, "content": "{}"}},
		{"write beside it", "write_file", map[string]any{"path": filepath.Join(nb, "new.json"), "content": "{}"}},
		{"write through the symlink", "write_file", map[string]any{"path": "cfg-link", "content": "{}"}},
		{"edit the config", "edit_file", map[string]any{"path": cfg, "old_text": privateKey, "new_text": "x"}},
		{"patch the config", "apply_patch", map[string]any{"edits": []any{map[string]any{"path": cfg, "action": "add", "new_text": "x"}}}},
		{"exec in the home", "exec", map[string]any{"command": "true", "working_dir": nb}},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			res := call(t, r, env, c.tool, c.args)
			require.True(t, res.IsError, res.Text)
			require.Contains(t, res.Text, "is in nanobot's private area "+nb)
			require.Contains(t, res.Text, "no tool may read or write it")
			require.NotContains(t, res.Text, privateKey)
		})
	}
	after, err := os.ReadFile(cfg)
	require.NoError(t, err)
	require.Equal(t, before, after)
	require.NoFileExists(t, filepath.Join(nb, "new.json"))
}

// Searches and listings from above leave the private area out but still
// reach the workspace inside it.
func TestWalksSkipThePrivateArea(t *testing.T) {
	env, r, home := privateHome(t)
	res := call(t, r, env, "grep", map[string]any{"pattern": "needle|sk-", "path": home, "output_mode": "content"})
	require.False(t, res.IsError, res.Text)
	require.Contains(t, res.Text, "needle of the user's")
	require.Contains(t, res.Text, "needle in the workspace")
	require.NotContains(t, res.Text, "session")
	require.NotContains(t, res.Text, privateKey)

	res = call(t, r, env, "find_files", map[string]any{"pattern": "*", "path": home})
	require.False(t, res.IsError, res.Text)
	require.Contains(t, res.Text, "notes.md")
	require.NotContains(t, res.Text, "config.json")
	require.NotContains(t, res.Text, "cli.jsonl")

	res = call(t, r, env, "list_dir", map[string]any{"path": home, "recursive": true})
	require.False(t, res.IsError, res.Text)
	require.Contains(t, res.Text, ".nanobot/workspace/notes.md")
	require.NotContains(t, res.Text, "config.json")
	require.NotContains(t, res.Text, "sessions")

	res = call(t, r, env, "list_dir", map[string]any{"path": filepath.Join(home, ".nanobot", "workspace")})
	require.False(t, res.IsError, res.Text)
	require.Equal(t, []string{"cfg-link", "notes.md"}, strings.Fields(res.Text))

	res = call(t, r, env, "read_file", map[string]any{"path": "notes.md"})
	require.False(t, res.IsError, res.Text)
	require.Contains(t, res.Text, "needle in the workspace")
}

// A config kept in the workspace itself stays private; the rest of the
// workspace does not.
func TestAConfigInTheWorkspaceStaysPrivate(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	writeTestFile(t, ws, "config.json", []byte(privateKey))
	writeTestFile(t, ws, "a.txt", []byte("fine"))
	r := NewRegistry()
	require.NoError(t, RegisterBuiltins(r, BuiltinOptions{}))
	env := Env{Workspace: ws, RestrictToWorkspace: true, Private: []string{filepath.Join(ws, "config.json"), ws}}
	res := call(t, r, env, "read_file", map[string]any{"path": "config.json"})
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "private area")
	res = call(t, r, env, "read_file", map[string]any{"path": "a.txt"})
	require.False(t, res.IsError, res.Text)
	res = call(t, r, env, "grep", map[string]any{"pattern": "sk-|fine", "output_mode": "content"})
	require.NotContains(t, res.Text, privateKey)
	require.Contains(t, res.Text, "fine")
}
