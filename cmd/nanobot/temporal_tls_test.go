package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
)

func envOf(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestTemporalSecurityFromTheEnvironment(t *testing.T) {
	c := testenv.NewCerts(t)
	read := func(p string) string { b, err := os.ReadFile(p); require.NoError(t, err); return string(b) }

	sec, err := temporalSecurityFromEnv(envOf(nil))
	require.NoError(t, err)
	require.Nil(t, sec.TLS, "no variable: plaintext, as the embedded temporal-dev speaks")

	for name, env := range map[string]map[string]string{
		"the CLI's names": {"TEMPORAL_TLS_CLIENT_CERT_PATH": c.ClientCert, "TEMPORAL_TLS_CLIENT_KEY_PATH": c.ClientKey, "TEMPORAL_TLS_SERVER_CA_CERT_PATH": c.CA},
		"short names":     {"TEMPORAL_TLS_CERT": c.ClientCert, "TEMPORAL_TLS_KEY": c.ClientKey, "TEMPORAL_TLS_CA": c.CA, "TEMPORAL_TLS_SERVER_NAME": "localhost"},
		"PEM data":        {"TEMPORAL_TLS_CLIENT_CERT_DATA": read(c.ClientCert), "TEMPORAL_TLS_CLIENT_KEY_DATA": read(c.ClientKey), "TEMPORAL_TLS_SERVER_CA_CERT_DATA": read(c.CA)},
		"both, agreeing":  {"TEMPORAL_TLS_CERT": c.ClientCert, "TEMPORAL_TLS_CLIENT_CERT_PATH": c.ClientCert, "TEMPORAL_TLS_KEY": c.ClientKey, "TEMPORAL_TLS_CA": c.CA},
	} {
		sec, err := temporalSecurityFromEnv(envOf(env))
		require.NoError(t, err, name)
		require.NotNil(t, sec.TLS, name)
		require.True(t, sec.MTLS, name)
		require.NotNil(t, sec.TLS.RootCAs, name)
		require.False(t, sec.TLS.InsecureSkipVerify, name)
	}

	sec, err = temporalSecurityFromEnv(envOf(map[string]string{"TEMPORAL_API_KEY": "k"}))
	require.NoError(t, err)
	require.NotNil(t, sec.TLS, "an API key means TLS, as in the Temporal CLI")
	require.False(t, sec.MTLS)
	require.Equal(t, "TEMPORAL_API_KEY", sec.Why)
	opts := sec.clientOptions(client.Options{})
	require.NotNil(t, opts.Credentials)
	sec, err = temporalSecurityFromEnv(envOf(map[string]string{"TEMPORAL_API_KEY": "k", "TEMPORAL_TLS": "false"}))
	require.NoError(t, err)
	require.Nil(t, sec.TLS)
	require.True(t, sec.clientOptions(client.Options{}).ConnectionOptions.TLSDisabled)
	sec, err = temporalSecurityFromEnv(envOf(map[string]string{"TEMPORAL_TLS": "true", "TEMPORAL_TLS_DISABLE_HOST_VERIFICATION": "true"}))
	require.NoError(t, err)
	require.True(t, sec.TLS.InsecureSkipVerify)

	bad := filepath.Join(t.TempDir(), "not.pem")
	require.NoError(t, os.WriteFile(bad, []byte("nothing"), 0o600))
	for want, env := range map[string]map[string]string{
		"TEMPORAL_TLS_CLIENT_CERT_PATH: open":             {"TEMPORAL_TLS_CLIENT_CERT_PATH": "/nonexistent/client.pem", "TEMPORAL_TLS_CLIENT_KEY_PATH": c.ClientKey},
		"TEMPORAL_TLS_KEY is set without its certificate": {"TEMPORAL_TLS_KEY": c.ClientKey},
		"TEMPORAL_TLS_CERT is set without its key":        {"TEMPORAL_TLS_CERT": c.ClientCert},
		"TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH: tls: private key does not match": {
			"TEMPORAL_TLS_CLIENT_CERT_PATH": c.ClientCert, "TEMPORAL_TLS_CLIENT_KEY_PATH": c.ServerKey},
		"TEMPORAL_TLS_CA holds no PEM certificate":                                {"TEMPORAL_TLS_CA": bad},
		"TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CERT are both set":        {"TEMPORAL_TLS_CLIENT_CERT_PATH": c.ClientCert, "TEMPORAL_TLS_CERT": c.ServerCert},
		"TEMPORAL_TLS=false but TEMPORAL_TLS_SERVER_CA_CERT_PATH is set":          {"TEMPORAL_TLS": "false", "TEMPORAL_TLS_SERVER_CA_CERT_PATH": c.CA},
		`TEMPORAL_TLS_DISABLE_HOST_VERIFICATION="yes please": want true or false`: {"TEMPORAL_TLS_DISABLE_HOST_VERIFICATION": "yes please"},
	} {
		_, err := temporalSecurityFromEnv(envOf(env))
		require.ErrorContains(t, err, want)
	}
}

// With TLS asked for and no TEMPORAL_ADDRESS, nanobot starts no embedded
// temporal-dev (it would serve plaintext) and says which variable stopped it.
func TestTLSNeverStartsThePlaintextEmbeddedServer(t *testing.T) {
	c := testenv.NewCerts(t)
	t.Setenv("TEMPORAL_ADDRESS", "")
	t.Setenv("NANOBOT_DEV_PORT", strconv.Itoa(testenv.FreePort(t)))
	t.Setenv("TEMPORAL_TLS_SERVER_CA_CERT_PATH", c.CA)
	dir := t.TempDir()
	cfg := config.Default()
	cfg.Path = filepath.Join(dir, "config.json")
	_, err := connectTemporal(context.Background(), cfg, slog.New(slog.DiscardHandler))
	require.ErrorContains(t, err, "TEMPORAL_TLS_SERVER_CA_CERT_PATH is set (TLS), so nanobot does not start its embedded Temporal")
	require.NoDirExists(t, filepath.Join(dir, "temporal"), "temporal-dev was never started")
}
