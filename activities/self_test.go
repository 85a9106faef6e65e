package activities

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/tools"
)

// myOn builds the my tool the way a worker does, on a real config file and
// real session files.
func myOn(t *testing.T, allowSet bool) (*tools.Registry, string, session.Store) {
	t.Helper()
	home := t.TempDir()
	path := filepath.Join(home, "config.json")
	require.NoError(t, os.WriteFile(path, []byte(`{
  "agents": {"defaults": {"model": "openai/gpt-4o", "maxToolIterations": 40, "workspace": "`+filepath.Join(home, "ws")+`"}},
  "providers": {"openai": {"apiKey": "sk-secret-value"}},
  "modelPresets": {"fast": {"model": "openai/gpt-4o-mini", "contextWindowTokens": 32000}},
  "tools": {"my": {"allowSet": true}}
}`), 0o600))
	store, err := session.NewJSONLStore(filepath.Join(home, "sessions"), nil)
	require.NoError(t, err)
	current := func() *config.Config {
		cfg, _, err := config.Load(path)
		require.NoError(t, err)
		return cfg
	}
	self := NewSelf(store, current, nil)
	reg := tools.NewRegistry()
	require.NoError(t, tools.RegisterBuiltins(reg, tools.BuiltinOptions{DisableFiles: true, Self: self, MyAllowSet: allowSet}))
	self.Tools = reg.Names
	return reg, path, store
}

func TestMyCheckReportsTheAgentWithoutSecrets(t *testing.T) {
	reg, _, _ := myOn(t, false)
	env := tools.Env{SessionKey: "telegram:1", Route: protocol.Route{Channel: "telegram", ChatID: "1", SenderID: "u9"}}
	res := reg.Execute(context.Background(), env, "my", `{"action": "check"}`)
	require.False(t, res.IsError, res.Text)
	for _, want := range []string{"max_iterations: 40", "model: 'openai/gpt-4o'", "model_preset: 'default'", "provider: 'openai'",
		"tools: ['my']", "channels: ", "schedules: ", "exec_config: ", "request: {'channel': 'telegram', 'chat_id': '1', 'sender_id': 'u9'}"} {
		require.Contains(t, res.Text, want)
	}
	require.NotContains(t, res.Text, "sk-secret-value")

	res = reg.Execute(context.Background(), env, "my", `{"action": "check", "key": "request.sender_id"}`)
	require.Equal(t, "request.sender_id: 'u9'", res.Text)
	res = reg.Execute(context.Background(), env, "my", `{"action": "check", "key": "providers.openai.api_key"}`)
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "Error: 'providers' is not accessible")
	res = reg.Execute(context.Background(), env, "my", `{"action": "check", "key": "nope"}`)
	require.Contains(t, res.Text, "Error: 'nope' not found")

	res = reg.Execute(context.Background(), env, "my", `{"action": "set", "key": "max_iterations", "value": 5}`)
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "Error: set is disabled (tools.my.allowSet is false)")
	def, _ := reg.Get("my")
	require.True(t, strings.HasSuffix(def.Description(), "READ-ONLY MODE: set is disabled."))
}

func TestMySetChangesOnlyWhatNanobotAllows(t *testing.T) {
	reg, path, store := myOn(t, true)
	ctx, env := context.Background(), tools.Env{SessionKey: "telegram:1"}
	run := func(args string) tools.Result { return reg.Execute(ctx, env, "my", args) }

	res := run(`{"action": "set", "key": "max_iterations", "value": 55}`)
	require.False(t, res.IsError, res.Text)
	require.Contains(t, res.Text, "Set max_iterations = 55 (was 40)")
	cfg, _, err := config.Load(path)
	require.NoError(t, err)
	require.Equal(t, 55, cfg.Agents.Defaults.MaxToolIterations, "written to the config file")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(raw), "sk-secret-value", "the rest of the file is kept")

	for args, want := range map[string]string{
		`{"action": "set", "key": "max_iterations", "value": 101}`:        "Error: 'max_iterations' must be <= 100",
		`{"action": "set", "key": "max_iterations", "value": "many"}`:     "Error: 'max_iterations' must be int, got str",
		`{"action": "set", "key": "model", "value": "x"}`:                 "disabled during an active session; use a configured model_preset",
		`{"action": "set", "key": "providers.openai.apiKey", "value": 1}`: "is protected and cannot be modified",
		`{"action": "set", "key": "api_key", "value": "x"}`:               "is protected and cannot be modified",
		`{"action": "set", "key": "exec_config.enable", "value": true}`:   "is read-only and cannot be modified",
		`{"action": "set", "key": "model_preset", "value": "slow"}`:       `unknown model preset "slow"`,
	} {
		res := run(args)
		require.True(t, res.IsError, args)
		require.Contains(t, res.Text, want, args)
	}

	res = run(`{"action": "set", "key": "model_preset", "value": "fast"}`)
	require.Equal(t, "Set model_preset = 'fast' for the next turn; model will be 'openai/gpt-4o-mini'; context_window_tokens will be 32000", res.Text)
	sess, err := store.Load(ctx, "telegram:1")
	require.NoError(t, err)
	require.Equal(t, "fast", sess.Metadata[session.ModelPresetKey], "the session's preset, as /model sets it")

	res = run(`{"action": "set", "key": "favourite_colour", "value": "teal"}`)
	require.Equal(t, "Set scratchpad.favourite_colour = 'teal'", res.Text)
	res = run(`{"action": "check", "key": "scratchpad.favourite_colour"}`)
	require.Equal(t, "scratchpad.favourite_colour: 'teal'", res.Text)
	res = run(`{"action": "check"}`)
	require.Contains(t, res.Text, "model: 'openai/gpt-4o-mini'")
	require.Contains(t, res.Text, "scratchpad: {'favourite_colour': 'teal'}")
}
