package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// sandboxHome lays out a home like nanobot's: ~/.nanobot/config.json and a
// workspace beside it, plus a tools folder and a symlink to the config folder.
func sandboxHome(t *testing.T) (home, cfgPath, ws, tools string) {
	t.Helper()
	home = t.TempDir()
	t.Setenv("HOME", home)
	cfgPath = filepath.Join(home, ".nanobot", "config.json")
	ws = filepath.Join(home, "workspace")
	tools = filepath.Join(home, "opt", "bin")
	for _, d := range []string{filepath.Dir(cfgPath), ws, tools, filepath.Join(ws, "cache"), filepath.Join(home, ".nanobot", "sessions")} {
		require.NoError(t, os.MkdirAll(d, 0o700))
	}
	require.NoError(t, os.Symlink(filepath.Join(home, ".nanobot"), filepath.Join(home, "opt", "nb")))
	return home, cfgPath, ws, tools
}

func loadExec(t *testing.T, cfgPath, ws string, exec map[string]any, mcp map[string]any) (*Config, error) {
	t.Helper()
	tree := map[string]any{
		"agents": map[string]any{"defaults": map[string]any{"workspace": ws}},
		"tools":  map[string]any{"exec": exec, "mcpServers": mcp},
	}
	data, err := json.Marshal(tree)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfgPath, data, 0o600))
	cfg, _, err := LoadWithEnv(cfgPath, []string{"HOME=" + filepath.Dir(filepath.Dir(cfgPath))})
	return cfg, err
}

func TestSandboxBindsAreRefusedWithTheKeyNamed(t *testing.T) {
	home, cfgPath, ws, tools := sandboxHome(t)
	cases := []struct {
		name    string
		key     string
		binds   []string
		wantErr string // "" = accepted
	}{
		{"a tools folder", "sandboxRoBinds", []string{tools}, ""},
		{"~ and $HOME are expanded", "sandboxRoBinds", []string{"~/opt/bin", "$HOME/opt/bin"}, ""},
		{"inside the workspace", "sandboxRwBinds", []string{filepath.Join(ws, "cache")}, ""},
		{"relative", "sandboxRoBinds", []string{tools, "opt/bin"}, `tools.exec.sandboxRoBinds[1]: "opt/bin" is not an absolute path`},
		{"missing", "sandboxRwBinds", []string{filepath.Join(home, "nope")}, `tools.exec.sandboxRwBinds[0]: "` + filepath.Join(home, "nope") + `" does not exist`},
		{"empty", "sandboxRoBinds", []string{" "}, `tools.exec.sandboxRoBinds[0]: " " is empty`},
		{"the home", "sandboxRoBinds", []string{tools, home}, `tools.exec.sandboxRoBinds[1]: "` + home + `" would expose the config folder`},
		{"root", "sandboxRwBinds", []string{"/"}, `tools.exec.sandboxRwBinds[0]: "/" would expose the config`},
		{"the config folder", "sandboxRoBinds", []string{filepath.Dir(cfgPath)}, "would expose the config"},
		{"the config folder by a symlink", "sandboxRoBinds", []string{filepath.Join(home, "opt", "nb")}, "would expose the config"},
		{"inside the config folder", "sandboxRoBinds", []string{filepath.Join(home, ".nanobot", "sessions")}, "is inside the config folder"},
		{"the workspace itself", "sandboxRoBinds", []string{ws}, "covers the workspace"},
		{"an unset variable", "sandboxRoBinds", []string{"$NANOBOT_NO_SUCH_VAR/bin"}, `"$NANOBOT_NO_SUCH_VAR/bin" is not an absolute path`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := loadExec(t, cfgPath, ws, map[string]any{"sandbox": "bwrap", c.key: c.binds}, nil)
			if c.wantErr == "" {
				require.NoError(t, err)
				ro, rw := cfg.SandboxBinds()
				for _, b := range append(ro, rw...) {
					require.True(t, filepath.IsAbs(b), b)
				}
				return
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), c.wantErr)
			require.Contains(t, err.Error(), cfgPath, "the error names the file")
		})
	}
}

// "" (nanobot's default) and no key at all mean auto; "none" is the only way off.
func TestSandboxModes(t *testing.T) {
	_, cfgPath, ws, _ := sandboxHome(t)
	for _, c := range []struct {
		exec map[string]any
		want string
	}{
		{map[string]any{}, SandboxAuto},
		{map[string]any{"sandbox": ""}, SandboxAuto},
		{map[string]any{"sandbox": "auto"}, SandboxAuto},
		{map[string]any{"sandbox": "bwrap"}, SandboxBwrap},
		{map[string]any{"sandbox": "none"}, SandboxNone},
	} {
		cfg, err := loadExec(t, cfgPath, ws, c.exec, nil)
		require.NoError(t, err, "%v", c.exec)
		require.Equal(t, c.want, cfg.Tools.Exec.SandboxMode(), "%v", c.exec)
	}
	require.Equal(t, SandboxAuto, Default().Tools.Exec.Sandbox, "onboard writes auto")

	_, err := loadExec(t, cfgPath, ws, map[string]any{"sandbox": "off"}, nil)
	require.ErrorContains(t, err, "config "+cfgPath+`: tools.exec.sandbox: unknown sandbox "off": use "auto"`)
}

func TestSandboxAllowDomains(t *testing.T) {
	_, cfgPath, ws, _ := sandboxHome(t)
	_, err := loadExec(t, cfgPath, ws, map[string]any{"sandboxAllowDomains": []string{"pypi.org", "Files.PythonHosted.org.", "10.1.2.3", "[::1]"}}, nil)
	require.NoError(t, err)
	for _, c := range []struct{ entry, want string }{
		{"*.github.com", `tools.exec.sandboxAllowDomains[1]: "*.github.com" has a wildcard: write "github.com", an entry covers its subdomains`},
		{"https://github.com", `tools.exec.sandboxAllowDomains[1]: "https://github.com" is not a host name`},
		{"github.com:443", "is not a host name"},
		{" ", `" " is empty`},
	} {
		_, err := loadExec(t, cfgPath, ws, map[string]any{"sandboxAllowDomains": []string{"pypi.org", c.entry}}, nil)
		require.ErrorContains(t, err, c.want)
		require.ErrorContains(t, err, "config "+cfgPath)
	}
}

func TestSandboxValueAndMCPOptIn(t *testing.T) {
	_, cfgPath, ws, _ := sandboxHome(t)
	_, err := loadExec(t, cfgPath, ws, map[string]any{"sandbox": "firejail"}, nil)
	require.ErrorContains(t, err, `tools.exec.sandbox: unknown sandbox "firejail"`)

	_, err = loadExec(t, cfgPath, ws, map[string]any{}, map[string]any{"web": map[string]any{"url": "http://127.0.0.1:1/mcp", "sandbox": true}})
	require.ErrorContains(t, err, "tools.mcpServers.web.sandbox: only a stdio server")

	cfg, err := loadExec(t, cfgPath, ws, map[string]any{"sandboxNetwork": false}, map[string]any{"fs": map[string]any{"command": "node", "sandbox": true}})
	require.NoError(t, err)
	require.True(t, cfg.Tools.MCPServers["fs"].Sandbox)
	require.False(t, cfg.Tools.Exec.SandboxNetworkOrDefault())
	require.True(t, Default().Tools.Exec.SandboxNetworkOrDefault(), "the network is kept by default")
}

func TestPrivatePathsAreResolved(t *testing.T) {
	home, cfgPath, _, _ := sandboxHome(t)
	real, err := filepath.EvalSymlinks(home)
	require.NoError(t, err)
	c := &Config{Path: filepath.Join(home, "opt", "nb", "config.json")} // through the symlink
	file, dirs := c.PrivatePaths()
	require.Equal(t, filepath.Join(real, ".nanobot", "config.json"), file)
	require.Equal(t, []string{filepath.Join(real, ".nanobot")}, dirs, "the config folder is the home: listed once")
	_ = cfgPath
}
