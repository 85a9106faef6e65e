package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// status ends with a Security block: the sandbox and its network, who
// approves, the owner key, and who reaches the web chat, the API and Temporal.
func TestStatusShowsTheSecurityBlock(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config.json")
	require.NoError(t, os.WriteFile(cfgPath, []byte(`{
		"tools": {"approval": {"mode": "risky", "tools": ["mcp_github_*"]}, "exec": {"sandbox": "none"}},
		"channels": {"web": {"enabled": true, "host": "0.0.0.0", "port": 18999, "token": "tok-123456"}}
	}`), 0o600))
	out, _ := statusOf(t, cfgPath)
	require.Contains(t, out, "\nSecurity:\n  Sandbox:   off (tools.exec.sandbox is \"none\")")
	require.Contains(t, out, "\n  Network:   the host's, unfiltered (exec is not sandboxed)\n")
	require.Contains(t, out, "\n  Approvals: risky: risky calls (commands the exec guard refuses, git push, sudo, …, tools mcp_github_*, "+
		"writes outside the workspace) wait for a person; answered only from the chat that asked or the owner's CLI")
	require.Contains(t, out, "\n  Owner key: "+filepath.Join(dir, "owner.key")+" absent: written at the next start\n")
	require.Contains(t, out, "\n  Web chat:  0.0.0.0:18999 (beyond this machine), channels.web.token required, answers to 127.0.0.1, localhost, [::1], any IP\n")
	require.Contains(t, out, "\n  API:       off\n")
	require.Contains(t, out, "\n  Temporal:  127.0.0.1:1, plaintext\n")
	require.NotContains(t, out, "tok-123456", "the token itself is never shown")

	// A key the sandbox would hide is still the model's to read when exec runs bare.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "owner.key"), []byte("00"), 0o600))
	out, _ = statusOf(t, cfgPath)
	require.Contains(t, out, "is readable by exec, which runs outside a sandbox: the model could approve its own calls")
	require.NoError(t, os.Chmod(filepath.Join(dir, "owner.key"), 0o644))
	out, _ = statusOf(t, cfgPath)
	require.Contains(t, out, "is mode 0644: others can read it")
}
