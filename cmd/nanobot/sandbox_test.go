package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/tools"
)

func TestOnboardWritesSandboxAuto(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"onboard"}, nil, &out, &errOut), errOut.String())
	data, err := os.ReadFile(filepath.Join(home, ".nanobot", "config.json"))
	require.NoError(t, err)
	var cfg struct {
		Tools struct {
			Exec map[string]any `json:"exec"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(data, &cfg))
	require.Equal(t, "auto", cfg.Tools.Exec["sandbox"])
	require.Equal(t, []any{}, cfg.Tools.Exec["sandboxAllowDomains"], "the key is there to fill in")
}

// Where bwrap is missing (an empty PATH), status says in one line that exec
// is not sandboxed, and how to get bubblewrap.
func TestStatusSaysExecIsNotSandboxed(t *testing.T) {
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(cfgPath, []byte(`{}`), 0o600))
	t.Setenv("PATH", t.TempDir())
	out, _ := statusOf(t, cfgPath)
	require.Contains(t, out, "\n  Sandbox:   ! "+tools.ExecUnsandboxedWarning+" (bwrap is not installed: ")
	require.Contains(t, out, "apt install bubblewrap")
	require.Contains(t, out, "\n  Network:   the host's, unfiltered (exec is not sandboxed)\n")

	require.NoError(t, os.WriteFile(cfgPath, []byte(`{"tools": {"exec": {"sandbox": "none"}}}`), 0o600))
	out, _ = statusOf(t, cfgPath)
	require.Contains(t, out, "\n  Sandbox:   off (tools.exec.sandbox is \"none\"): exec runs with your rights, and the model can read your files and keys\n")
}
