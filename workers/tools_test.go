package workers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/peer"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/secrets"
	"github.com/nanobot-durable/nanobot/tools"
)

// channelSecrets are the key-holding fields of every channel's block.
var channelSecrets = map[string][]string{
	"telegram": {"token", "webhookSecretToken"}, "slack": {"botToken", "appToken"},
	"discord": {"token", "proxyPassword"}, "email": {"imapPassword", "smtpPassword"},
	"matrix": {"password", "accessToken"}, "feishu": {"appSecret", "encryptKey", "verificationToken"},
	"dingtalk": {"clientSecret"}, "qq": {"secret"}, "wecom": {"secret"}, "weixin": {"token"},
	"whatsapp": {"bridgeToken"},
}

// secretConfig writes a config holding a key for every provider and
// channel, exports each provider's key variable too, and returns every value.
func secretConfig(t *testing.T, exec map[string]any) (*config.Config, []string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	var values []string
	secret := func(what string) string {
		v := fmt.Sprintf("sk-%s-%d-secretvalue", strings.ReplaceAll(what, ".", "-"), len(values))
		values = append(values, v)
		return v
	}
	provs := map[string]any{}
	envSet := map[string]bool{} // providers may share a variable (MINIMAX_API_KEY): one value each
	for _, s := range providers.Specs() {
		provs[s.Name] = map[string]any{"apiKey": secret(s.Name)}
		if s.EnvKey != "" && !envSet[s.EnvKey] {
			envSet[s.EnvKey] = true
			t.Setenv(s.EnvKey, secret("env."+s.EnvKey))
		}
	}
	chans := map[string]any{}
	for name, keys := range channelSecrets {
		block := map[string]any{}
		for _, k := range keys {
			block[k] = secret(name + "." + k)
		}
		chans[name] = block
	}
	tree := map[string]any{
		"agents":    map[string]any{"defaults": map[string]any{"workspace": filepath.Join(home, "workspace")}},
		"providers": provs, "channels": chans,
		"api": map[string]any{"apiKey": secret("api")},
		"tools": map[string]any{"exec": exec, "web": map[string]any{"search": map[string]any{"apiKey": secret("brave")}},
			"mcpServers": map[string]any{"x": map[string]any{"url": "http://127.0.0.1:1/mcp", "headers": map[string]any{"Authorization": "Bearer " + secret("mcp")}}}},
	}
	path := filepath.Join(home, ".nanobot", "config.json")
	require.NoError(t, os.MkdirAll(filepath.Join(home, "workspace"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	data, err := json.Marshal(tree)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	cfg, _, err := config.Load(path)
	require.NoError(t, err)
	return cfg, values
}

// exec's environment is an allow list: checked here against every key the
// config and the environment hold, an allowedEnvKeys entry holding one
// included.
func TestExecEnvironmentCarriesNoConfiguredSecret(t *testing.T) {
	t.Setenv("NANOBOT_TEST_PLAIN", "plain-value")
	cfg, values := secretConfig(t, map[string]any{"allowedEnvKeys": []string{"OPENAI_API_KEY", "NANOBOT_TEST_PLAIN", "HF_TOKEN"}})
	set := secrets.FromEnv(cfg)
	for _, v := range values {
		require.NotEqual(t, v, set.Redact(v), "the secret set misses %s", v)
	}
	sb, err := sandboxFor(cfg, nil)
	require.NoError(t, err)
	reg, err := newRegistry(cfg, sb, nil, nil, nil, nil, nil, nil)
	require.NoError(t, err)
	env := tools.Env{Workspace: cfg.Agents.Defaults.WorkspacePath(), RestrictToWorkspace: true}
	res := reg.Execute(context.Background(), env, "exec", `{"command": "env"}`)
	require.False(t, res.IsError, res.Text)
	for _, v := range values {
		require.NotContains(t, res.Text, v)
	}
	require.NotContains(t, res.Text, "OPENAI_API_KEY")
	require.Contains(t, res.Text, "NANOBOT_TEST_PLAIN=plain-value")
}

// By default (no sandbox key: "auto"), where bwrap runs, the registry's exec
// runs in the layout built from the config: the config file is not there.
func TestConfiguredSandboxHidesTheConfigFromExec(t *testing.T) {
	cfg, values := secretConfig(t, map[string]any{})
	sb, err := sandboxFor(cfg, nil)
	require.NoError(t, err)
	if err := sb.Ready(); err != nil {
		peer.Missing(t, peer.Bwrap, err.Error())
	}
	peer.Used(t, peer.Bwrap)
	line, network, alarm := SandboxState(cfg)
	require.False(t, alarm, line)
	require.Contains(t, line, "bwrap: only "+cfg.Agents.Defaults.WorkspacePath()+" writable")
	require.Equal(t, "HTTP(S) only, through the worker's proxy; loopback, private and link-local addresses are refused", network)
	require.True(t, sandboxActive(cfg, sb), "the file tools are confined with it")
	reg, err := newRegistry(cfg, sb, nil, nil, nil, nil, nil, nil)
	require.NoError(t, err)
	env := tools.Env{Workspace: cfg.Agents.Defaults.WorkspacePath(), RestrictToWorkspace: true}
	res := reg.Execute(context.Background(), env, "exec", fmt.Sprintf(`{"command": "cat %s; env"}`, cfg.Path))
	require.Contains(t, res.Text, "No such file or directory")
	for _, v := range values {
		require.NotContains(t, res.Text, v)
	}
}

// Each setting's lines, where bwrap is missing (an empty PATH) and where it is not asked for.
func TestSandboxStateSaysWhatExecRunsWith(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, c := range []struct {
		exec          map[string]any
		sandbox, net  string
		alarm, active bool
	}{
		{map[string]any{}, tools.ExecUnsandboxedWarning + " (bwrap is not installed: ", "the host's, unfiltered (exec is not sandboxed)", true, false},
		{map[string]any{"sandbox": "bwrap"}, `tools.exec.sandbox is "bwrap" but bwrap is not installed`, "none (nothing runs)", true, false},
		{map[string]any{"sandbox": "none"}, `off (tools.exec.sandbox is "none"): exec runs with your rights, and the model can read your files and keys`, "the host's, unfiltered (exec is not sandboxed)", false, false},
	} {
		cfg, _ := secretConfig(t, c.exec)
		sandbox, network, alarm := SandboxState(cfg)
		require.True(t, strings.HasPrefix(sandbox, c.sandbox), "%v: %s", c.exec, sandbox)
		require.Equal(t, c.net, network, "%v", c.exec)
		require.Equal(t, c.alarm, alarm, "%v", c.exec)
		sb, err := sandboxFor(cfg, nil)
		require.NoError(t, err)
		require.Equal(t, c.active, sandboxActive(cfg, sb), "%v", c.exec)
		ex := builtinOptions(cfg.Tools, sb, nil).Exec
		require.Equal(t, c.exec["sandbox"] != "none", ex.Sandbox != nil, "%v", c.exec)
		require.Equal(t, c.exec["sandbox"] == "bwrap", ex.SandboxRequired, "%v", c.exec)
	}
}
