package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/secrets"
)

// The unit is built from its inputs: plain settings inline, every secret
// (by name, by value the config holds, a URL's password) only in the
// EnvironmentFile, variables nanobot does not read left out, and systemd's
// specials (%, $, spaces) escaped.
func TestServiceUnitKeepsSecretsInTheEnvironmentFile(t *testing.T) {
	t.Setenv("NANOBOT_STOP_TIMEOUT_S", "")
	cfg := config.Default()
	cfg.Tools.Exec.AllowedEnvKeys = []string{"GOPATH"}
	known := secrets.FromConfig(map[string]any{"providers": map[string]any{"custom": map[string]any{"apiKey": "cfg-key-123456"}}}, nil)
	environ := []string{
		"TEMPORAL_ADDRESS=temporal.internal:7233",
		"NANOBOT_DATABASE_URL=postgres://nanobot:pg$ecret@db:5432/nanobot",
		"OPENROUTER_API_KEY=sk-or-env-secret",
		"NANOBOT_LOG_LEVEL=info",
		"GOPATH=cfg-key-123456",
		"PATH=/opt/my bin:/usr/bin",
		"HOME=/home/u", "UNRELATED=1", "TELEGRAM_TOKEN=not-read-by-nanobot",
	}
	u := buildServiceUnit("gateway", "/opt/nano bot/nanobot", "/etc/nb/config%1.json", "/home/u/.nanobot/nanobot-gateway.env",
		[]string{"--health-addr", "127.0.0.1:18791"}, environ, cfg, known)

	require.Equal(t, `# Written by `+"`nanobot gateway install-service`"+`; run it again to rewrite this file and /home/u/.nanobot/nanobot-gateway.env.
[Unit]
Description=nanobot gateway (a durable agent on Temporal)

[Service]
Type=simple
ExecStart="/opt/nano bot/nanobot" --config /etc/nb/config%%1.json gateway --health-addr 127.0.0.1:18791
Restart=on-failure
RestartSec=5
# SIGTERM to nanobot alone: it lets running activities finish, then stops what it started.
KillMode=mixed
TimeoutStopSec=50
Environment=NANOBOT_LOG_LEVEL=info
Environment="PATH=/opt/my bin:/usr/bin"
Environment=TEMPORAL_ADDRESS=temporal.internal:7233
EnvironmentFile=/home/u/.nanobot/nanobot-gateway.env

[Install]
WantedBy=default.target
`, u.unit())
	require.Equal(t, `# The secrets of nanobot-gateway.service (keep this file 0600); written by `+"`nanobot gateway install-service`"+`.
GOPATH="cfg-key-123456"
NANOBOT_DATABASE_URL="postgres://nanobot:pg\$ecret@db:5432/nanobot"
OPENROUTER_API_KEY="sk-or-env-secret"
`, u.envFileText())
}

// `nanobot gateway install-service` writes both files, the secret only in
// the 0600 one, and prints the systemctl line without running it.
func TestInstallServiceWritesTheUnitAndA0600EnvironmentFile(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("NANOBOT_DATABASE_URL", "postgres://nanobot:s3cret-pass@127.0.0.1:1/nanobot")
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:7233")
	cfgPath := filepath.Join(home, ".nanobot", "config.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(cfgPath), 0o700))
	require.NoError(t, os.WriteFile(cfgPath, []byte(`{}`), 0o600))

	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"--config", cfgPath, "gateway", "install-service"}, nil, &out, &errOut), errOut.String())
	unitPath := filepath.Join(home, ".config", "systemd", "user", "nanobot-gateway.service")
	envPath := filepath.Join(home, ".nanobot", "nanobot-gateway.env")
	require.Contains(t, out.String(), "wrote "+unitPath+"\n")
	require.Contains(t, out.String(), "\n  systemctl --user daemon-reload && systemctl --user enable --now nanobot-gateway\n")

	unit, err := os.ReadFile(unitPath)
	require.NoError(t, err)
	exe, err := os.Executable()
	require.NoError(t, err)
	require.Contains(t, string(unit), "\nExecStart="+exe+" --config "+cfgPath+" gateway\n")
	require.Contains(t, string(unit), "\nEnvironment=TEMPORAL_ADDRESS=127.0.0.1:7233\n")
	require.Contains(t, string(unit), "\nEnvironmentFile="+envPath+"\n")
	require.NotContains(t, string(unit), "s3cret-pass")

	st, err := os.Stat(envPath)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	env, err := os.ReadFile(envPath)
	require.NoError(t, err)
	require.Contains(t, string(env), "\nNANOBOT_DATABASE_URL=\"postgres://nanobot:s3cret-pass@127.0.0.1:1/nanobot\"\n")

	// --print shows the worker's unit on stdout; the secret still goes to its file only.
	out.Reset()
	require.Equal(t, 0, run([]string{"--config", cfgPath, "worker", "install-service", "--print", "--", "--health-addr", "127.0.0.1:18791"}, nil, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), " worker --health-addr 127.0.0.1:18791\n")
	require.NotContains(t, out.String(), "s3cret-pass")
	require.True(t, strings.HasPrefix(out.String(), "# Written by `nanobot worker install-service`"))
	require.FileExists(t, filepath.Join(home, ".nanobot", "nanobot-worker.env"))
}

// The TLS variables reach the unit: certificate and CA paths inline, the key
// (its path too: the name says key) and an API key only in the 0600 file.
func TestServiceUnitCarriesTheTemporalTLSVariables(t *testing.T) {
	environ := []string{
		"TEMPORAL_ADDRESS=temporal.example:7233",
		"TEMPORAL_TLS_CLIENT_CERT_PATH=/etc/nanobot/client.pem",
		"TEMPORAL_TLS_CLIENT_KEY_PATH=/etc/nanobot/client.key",
		"TEMPORAL_TLS_SERVER_CA_CERT_PATH=certs/ca.pem",
		"TEMPORAL_TLS_SERVER_NAME=temporal.example",
		"TEMPORAL_TLS_CLIENT_KEY_DATA=-----BEGIN EC PRIVATE KEY-----\nMHc\n-----END EC PRIVATE KEY-----",
		"TEMPORAL_API_KEY=tmprl-key",
	}
	u := buildServiceUnit("gateway", "/usr/bin/nanobot", "", "/home/u/.nanobot/nanobot-gateway.env", nil, environ, config.Default(), secrets.FromConfig(nil, nil))
	wd, err := os.Getwd()
	require.NoError(t, err)
	for _, line := range []string{
		"Environment=TEMPORAL_TLS_CLIENT_CERT_PATH=/etc/nanobot/client.pem\n",
		"Environment=TEMPORAL_TLS_SERVER_CA_CERT_PATH=" + filepath.Join(wd, "certs/ca.pem") + "\n", // the unit runs in the home directory
		"Environment=TEMPORAL_TLS_SERVER_NAME=temporal.example\n",
	} {
		require.Contains(t, u.unit(), line)
	}
	require.NotContains(t, u.unit(), "KEY")
	require.Contains(t, u.envFileText(), "TEMPORAL_TLS_CLIENT_KEY_PATH=\"/etc/nanobot/client.key\"\n")
	require.Contains(t, u.envFileText(), "TEMPORAL_TLS_CLIENT_KEY_DATA=\"-----BEGIN EC PRIVATE KEY-----\nMHc\n-----END EC PRIVATE KEY-----\"\n")
	require.Contains(t, u.envFileText(), "TEMPORAL_API_KEY=\"tmprl-key\"\n")
}
