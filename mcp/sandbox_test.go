package mcp

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/peer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/tools"
)

// A stdio server with "sandbox": true runs in exec's bwrap layout: it can
// write only the workspace and cannot see the config.
func TestSandboxedStdioServer(t *testing.T) {
	requireBwrap(t)
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

// requireBwrap stops the test where bwrap cannot run (a skip locally, a failure under CI).
func requireBwrap(t *testing.T) {
	t.Helper()
	if err := tools.NewSandbox(tools.SandboxLayout{}).Ready(); err != nil {
		peer.Missing(t, peer.Bwrap, err.Error()+" (make bwrap installs it)")
	}
	peer.Used(t, peer.Bwrap)
}

// A sandboxed stdio server gets exec's network: no route to the host's
// loopback, HTTP through the proxy only, which refuses the host.
func TestSandboxedStdioServerReachesOnlyThroughTheProxy(t *testing.T) {
	requireBwrap(t)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	exe, err := os.Executable()
	require.NoError(t, err)
	bin, err := filepath.EvalSymlinks(filepath.Dir(exe))
	require.NoError(t, err)
	// The target is on 127.0.0.5, whitelisted by its /32; the host's 127.0.0.1 stays refused.
	target := testenv.ServeHTTP(t, "127.0.0.5:0", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "hello through the proxy") })
	host, reached := testenv.CountAccepts(t, "127.0.0.1:0")

	sb := tools.NewSandbox(tools.SandboxLayout{Workspace: ws, RoBinds: []string{bin}, Network: true})
	guard, err := tools.NewSSRFGuard([]string{"127.0.0.5/32"}, nil)
	require.NoError(t, err)
	sb.Egress = tools.EgressRules{Guard: guard}
	p := newSelfPool(t, func(c *config.MCPServer) { c.Sandbox = true })
	p.SetSandbox(sb)

	require.Contains(t, callTool(t, p, "mcp_self_dial", map[string]any{"addr": host}).Text, "connection refused")
	require.Equal(t, "200 hello through the proxy", callTool(t, p, "mcp_self_fetch", map[string]any{"url": "http://" + target + "/"}).Text)
	res := callTool(t, p, "mcp_self_fetch", map[string]any{"url": "http://" + host + "/"}).Text
	require.Equal(t, "403 nanobot sandbox proxy refused "+host+": 127.0.0.1 is a loopback address (this restriction is non-bypassable)\n", res)
	require.Zero(t, reached.Load(), "nothing reached the host's port")
}
