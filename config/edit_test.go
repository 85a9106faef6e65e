package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSetFileValueEditsOneKeyAndKeepsTheRest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	orig := `{"agents": {"defaults": {"max_tool_iterations": 40, "model": "m"}},
  "providers": {"openai": {"apiKey": "sk-file"}}}`
	require.NoError(t, os.WriteFile(path, []byte(orig), 0o600))
	t.Setenv("NANOBOT_PROVIDERS__ANTHROPIC__API_KEY", "sk-from-env")

	require.NoError(t, SetFileValue(path, []string{"agents", "defaults", "maxToolIterations"}, 55))
	cfg, _, err := Load(path)
	require.NoError(t, err)
	require.Equal(t, 55, cfg.Agents.Defaults.MaxToolIterations)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(raw), `"max_tool_iterations": 55`, "the file's own spelling is kept")
	require.Contains(t, string(raw), `"sk-file"`)
	require.NotContains(t, string(raw), "sk-from-env", "what the environment set is never written")
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	require.NoError(t, SetFileValue(path, []string{"tools", "my", "allowSet"}, true), "missing blocks are made")
	cfg, _, err = Load(path)
	require.NoError(t, err)
	require.True(t, cfg.Tools.My.AllowSet)

	before, err := os.ReadFile(path)
	require.NoError(t, err)
	err = SetFileValue(path, []string{"gateway", "instance"}, "NOT valid!")
	require.ErrorContains(t, err, "gateway.instance")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after, "a change that breaks the file is undone")
}
