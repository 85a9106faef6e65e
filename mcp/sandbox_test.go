package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/peer"
	"github.com/nanobot-durable/nanobot/tools"
)

// A stdio server with "sandbox": true runs in exec's bwrap layout: it can
// write only the workspace and cannot see the config.
func TestSandboxedStdioServer(t *testing.T) {
	if err := tools.NewSandbox(tools.SandboxLayout{}).Ready(); err != nil {
		peer.Missing(t, peer.Bwrap, err.Error()+" (make bwrap installs bubblewrap)")
	}
	peer.Used(t, peer.Bwrap)
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	nb := filepath.Join(home, ".nanobot")
	ws := filepath.Join(nb, "workspace")
	require.NoError(t, os.MkdirAll(ws, 0o755))
	cfgFile := filepath.Join(nb, "config.json")
	require.NoError(t, os.WriteFile(cfgFile, []byte("sk-mcp-sandbox-key"), 0o600))
	exe, err := os.Executable()
	require.NoError(t, err)
	bin, err := filepath.EvalSymlinks(filepath.Dir(exe))
	require.NoError(t, err)

	p := newSelfPool(t, func(c *config.MCPServer) { c.Sandbox = true })
	p.SetSandbox(tools.NewSandbox(tools.SandboxLayout{Workspace: ws, Hidden: []string{nb}, RoBinds: []string{bin}, Network: true}))

	res := callTool(t, p, "mcp_self_read", map[string]any{"path": cfgFile})
	require.NotContains(t, res.Text, "sk-mcp-sandbox-key")
	require.Contains(t, res.Text, "read failed")
	res = callTool(t, p, "mcp_self_write", map[string]any{"path": filepath.Join(nb, "outside.txt")})
	require.Contains(t, res.Text, "read-only file system")
	require.NoFileExists(t, filepath.Join(nb, "outside.txt"))
	res = callTool(t, p, "mcp_self_write", map[string]any{"path": filepath.Join(ws, "inside.txt")})
	require.Equal(t, "written; HOME="+ws, res.Text)
	require.FileExists(t, filepath.Join(ws, "inside.txt"))

	plain := newSelfPool(t, nil) // not opted in: the same server reads it
	require.Equal(t, "sk-mcp-sandbox-key", callTool(t, plain, "mcp_self_read", map[string]any{"path": cfgFile}).Text)
}

// Where bwrap cannot run, an opted-in server does not start, and says why.
func TestSandboxedStdioServerWithoutBwrapDoesNotStart(t *testing.T) {
	p := newSelfPool(t, func(c *config.MCPServer) { c.Sandbox = true })
	p.SetSandbox(tools.NewSandbox(tools.SandboxLayout{Workspace: t.TempDir(), Program: filepath.Join(t.TempDir(), "bwrap")}))
	ts, errs := p.Tools(context.Background())
	require.Empty(t, ts)
	require.Len(t, errs, 1)
	require.Contains(t, errs[0].Error(), "sandbox is on for this server")
	require.Contains(t, errs[0].Error(), "bwrap is not installed")

	none := newSelfPool(t, func(c *config.MCPServer) { c.Sandbox = true }) // no sandbox set at all
	_, errs = none.Tools(context.Background())
	require.Len(t, errs, 1)
	require.True(t, strings.Contains(errs[0].Error(), "no sandbox is configured"), errs[0].Error())
}
