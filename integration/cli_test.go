package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

func TestOnboardIsIdempotent(t *testing.T) {
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home)
	out, errOut, code := runNanobot(t, env, "onboard")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Created config")
	for _, f := range []string{"AGENTS.md", "SOUL.md", "USER.md", "HEARTBEAT.md", "memory/MEMORY.md"} {
		require.FileExists(t, filepath.Join(home, ".nanobot", "workspace", f))
	}
	require.DirExists(t, filepath.Join(home, ".nanobot", "workspace", "skills"))
	soul := filepath.Join(home, ".nanobot", "workspace", "SOUL.md")
	require.NoError(t, os.WriteFile(soul, []byte("my own soul"), 0o644))
	cfgBefore, err := os.ReadFile(filepath.Join(home, ".nanobot", "config.json"))
	require.NoError(t, err)
	keyFile := filepath.Join(home, ".nanobot", "owner.key")
	st, err := os.Stat(keyFile)
	require.NoError(t, err, "onboard writes the owner key")
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	keyBefore, err := os.ReadFile(keyFile)
	require.NoError(t, err)
	require.NotContains(t, out, strings.TrimSpace(string(keyBefore)), "the key is never shown")

	out, errOut, code = runNanobot(t, env, "onboard")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "left as it is")
	require.NotContains(t, out, "created")
	data, err := os.ReadFile(soul)
	require.NoError(t, err)
	require.Equal(t, "my own soul", string(data), "onboard never overwrites the user's files")
	cfgAfter, err := os.ReadFile(filepath.Join(home, ".nanobot", "config.json"))
	require.NoError(t, err)
	require.Equal(t, string(cfgBefore), string(cfgAfter))
	keyAfter, err := os.ReadFile(keyFile)
	require.NoError(t, err)
	require.Equal(t, string(keyBefore), string(keyAfter), "an existing key is kept")

	// The written config reads back without warnings.
	_, errOut, code = runNanobot(t, env, "status")
	require.Equal(t, 0, code)
	require.NotContains(t, errOut, "config:")
}

func TestMalformedConfigNamesFileAndKey(t *testing.T) {
	home := t.TempDir()
	cfg := filepath.Join(home, ".nanobot", "config.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(cfg), 0o700))
	env := append(os.Environ(), "HOME="+home)

	require.NoError(t, os.WriteFile(cfg, []byte(`{"agents": {"defaults": {"maxTokens": "lots"}}}`), 0o600))
	_, errOut, code := runNanobot(t, env, "agent", "-m", "hi")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, cfg)
	require.Contains(t, errOut, "agents.defaults.maxTokens")
	require.Equal(t, 1, strings.Count(strings.TrimSpace(errOut), "\n")+1, "one line: %q", errOut)

	require.NoError(t, os.WriteFile(cfg, []byte("{\n  \"agents\": {,\n}"), 0o600))
	_, errOut, code = runNanobot(t, env, "status")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, cfg)
	require.Contains(t, errOut, "line 2")
}

// TestEmbeddedDevServerStartsOnDemand: with no TEMPORAL_ADDRESS and nothing
// listening, `nanobot agent` starts temporal-dev itself (on a test port),
// with its database under the config dir, and stops it at exit.
func TestEmbeddedDevServerStartsOnDemand(t *testing.T) {
	model := modeltest.New(modeltest.Text("answered via the embedded server"))
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	env, _ := embeddedEnv(t, home)
	port := devPort(env)
	out, errOut, code := runNanobot(t, env, "agent", "-m", "hello")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "answered via the embedded server\n", out)
	require.FileExists(t, filepath.Join(home.Dir, ".nanobot", "temporal", "temporal.db"))
	out, _, code = runNanobot(t, env, "status")
	require.Equal(t, 0, code)
	require.Contains(t, out, "127.0.0.1:"+strconv.Itoa(port)+" (embedded default)")
	require.Contains(t, out, "not answering", "the child server stopped with the command")
	db := filepath.Join(home.Dir, ".nanobot", "temporal", "temporal.db")
	require.Regexp(t, `\n  temporal db +[0-9.]+ MiB  `+regexp.QuoteMeta(db)+` \([0-9.]+ (B|KiB|MiB) free pages, given back when it next starts\)\n`, out,
		"status measures the embedded server's real database")

	out, errOut, code = runNanobot(t, env, "gc")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `\nTemporal DB: (vacuumed while the server is stopped|[0-9.]+ MiB, )`, out)
}
