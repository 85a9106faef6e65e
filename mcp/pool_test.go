package mcp

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/tools"
)

// callTool finds a tool by its wrapped name and runs it through a registry,
// so argument validation against the server's schema is exercised too.
func callTool(t *testing.T, p *Pool, name string, args map[string]any) tools.Result {
	t.Helper()
	ts, errs := p.Tools(context.Background())
	require.Empty(t, errs)
	for _, tool := range ts {
		if tool.Name() == name {
			return tool.Run(context.Background(), tools.Env{}, args)
		}
	}
	t.Fatalf("tool %s not offered", name)
	return tools.Result{}
}

func newSelfPool(t *testing.T, mutate func(*config.MCPServer)) *Pool {
	t.Helper()
	cfg := selfServer(t)
	if mutate != nil {
		mutate(&cfg)
	}
	p := NewPool(map[string]config.MCPServer{"self": cfg}, nil)
	t.Cleanup(p.Close)
	return p
}

func TestPoolStdio(t *testing.T) {
	p := newSelfPool(t, nil)
	ts, errs := p.Tools(context.Background())
	require.Empty(t, errs)
	byName := map[string]tools.Tool{}
	for _, tool := range ts {
		byName[tool.Name()] = tool
	}
	require.Contains(t, byName, "mcp_self_weird_name_v2")
	require.Equal(t, tools.Flags{ReadOnly: true}, byName["mcp_self_echo"].Flags())
	require.Equal(t, tools.Flags{SideEffects: true}, byName["mcp_self_fail"].Flags())
	require.Equal(t, "Echo a message", byName["mcp_self_echo"].Description())

	require.Equal(t, tools.Result{Text: "echo: hi"}, callTool(t, p, "mcp_self_echo", map[string]any{"message": "hi"}))
	require.Equal(t, tools.Result{Text: "Error: boom", IsError: true}, callTool(t, p, "mcp_self_fail", nil))
	require.Equal(t, "here it is\n[image: image/png, 4 bytes]", callTool(t, p, "mcp_self_image", nil).Text)
	require.Equal(t, "weird", callTool(t, p, "mcp_self_weird_name_v2", nil).Text)

	// Parallel calls share one client.
	pid := pidOf(t, p, "self")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			res := byName["mcp_self_echo"].Run(context.Background(), tools.Env{}, map[string]any{"message": "x"})
			require.Equal(t, "echo: x", res.Text)
		})
	}
	wg.Wait()
	require.Equal(t, pid, pidOf(t, p, "self"))
}

func TestPoolStdioEnvAndCwd(t *testing.T) {
	t.Setenv("MCP_TEST_PARENT_SECRET", "s3cret")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	p := newSelfPool(t, func(c *config.MCPServer) {
		c.Env["MCP_TEST_VAR"] = "v"
		c.Cwd = dir
	})
	require.Equal(t, "v||"+dir, callTool(t, p, "mcp_self_env", nil).Text)
}

func TestPoolRegisterRefreshesOnListChanged(t *testing.T) {
	p := newSelfPool(t, nil)
	reg := tools.NewRegistry()
	tools.RegisterFilesystem(reg)
	require.Empty(t, p.Register(context.Background(), reg))
	names := reg.Names()
	require.Contains(t, names, "mcp_self_echo")
	require.Equal(t, "read_file", names[indexOf(names, "read_file")])
	require.Less(t, indexOf(names, "write_file"), indexOf(names, "mcp_self_add"), "MCP tools sort after built-ins")

	echo, _ := reg.Get("mcp_self_echo")
	res := reg.Execute(context.Background(), tools.Env{}, "mcp_self_add", `{"name":"fresh"}`)
	require.Equal(t, "added fresh", res.Text)
	waitFor(t, func() bool {
		require.Empty(t, p.Register(context.Background(), reg))
		_, ok := reg.Get("mcp_self_fresh")
		return ok
	})
	same, _ := reg.Get("mcp_self_echo")
	require.Same(t, echo, same, "unchanged tools are not re-registered")
	require.Equal(t, "fresh ran", reg.Execute(context.Background(), tools.Env{}, "mcp_self_fresh", `{}`).Text)

	reg.Execute(context.Background(), tools.Env{}, "mcp_self_remove", `{"name":"fresh"}`)
	waitFor(t, func() bool {
		require.Empty(t, p.Register(context.Background(), reg))
		_, ok := reg.Get("mcp_self_fresh")
		return !ok
	})

	// A server that cannot be reached keeps its registered tools.
	s := p.servers["self"]
	s.mu.Lock()
	s.cfg.Command = "/nonexistent/mcp-server"
	p.dropLocked(s, s.conn, errors.New("test"))
	s.mu.Unlock()
	errs := p.Register(context.Background(), reg)
	require.Len(t, errs, 1)
	_, ok := reg.Get("mcp_self_echo")
	require.True(t, ok)
}

func TestPoolServerDies(t *testing.T) {
	p := newSelfPool(t, nil)
	first := pidOf(t, p, "self")

	res := callTool(t, p, "mcp_self_die", nil)
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "Error: MCP server 'self' failed:")
	require.Contains(t, res.Text, "dying on purpose", "the server's stderr says why")

	second := pidOf(t, p, "self")
	require.NotEqual(t, first, second, "the next call reconnects")

	// Killed between calls: one error result, then a fresh process.
	p.servers["self"].mu.Lock()
	proc := p.servers["self"].conn.cmd.Process
	p.servers["self"].mu.Unlock()
	require.NoError(t, proc.Kill())
	_, _ = proc.Wait()
	time.Sleep(100 * time.Millisecond)
	res = callTool(t, p, "mcp_self_echo", map[string]any{"message": "after"})
	if res.IsError {
		require.Contains(t, res.Text, "MCP server 'self' failed")
		res = callTool(t, p, "mcp_self_echo", map[string]any{"message": "after"})
	}
	require.Equal(t, tools.Result{Text: "echo: after"}, res)
	require.NotEqual(t, second, pidOf(t, p, "self"))
}

func TestPoolTimeoutKeepsConnection(t *testing.T) {
	p := newSelfPool(t, func(c *config.MCPServer) { c.ToolTimeout = 1 })
	pid := pidOf(t, p, "self")
	start := time.Now()
	res := callTool(t, p, "mcp_self_sleep", map[string]any{"ms": 5000})
	require.Equal(t, tools.Result{Text: "Error: MCP tool call timed out after 1s", IsError: true}, res)
	require.Less(t, time.Since(start), 3*time.Second)
	require.Equal(t, pid, pidOf(t, p, "self"), "a slow tool is not a dead server")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ts, _ := p.Tools(context.Background())
	for _, tool := range ts {
		if tool.Name() == "mcp_self_echo" {
			res := tool.Run(ctx, tools.Env{}, map[string]any{"message": "x"})
			require.True(t, res.IsError)
			require.Contains(t, res.Text, "cancel")
		}
	}
}

func TestPoolFailedServerIsNotFatal(t *testing.T) {
	cfg := selfServer(t)
	p := NewPool(map[string]config.MCPServer{
		"good":    cfg,
		"missing": {Command: "/nonexistent/mcp-server"},
		"broken":  {Command: "sh", Args: []string{"-c", "echo 'cannot start: no config' >&2; exit 1"}},
	}, nil)
	defer p.Close()
	ts, errs := p.Tools(context.Background())
	require.NotEmpty(t, ts)
	require.Len(t, errs, 2)
	require.ErrorContains(t, errs[0], `mcp server "broken"`)
	require.ErrorContains(t, errs[0], "cannot start: no config")
	require.ErrorContains(t, errs[1], `mcp server "missing"`)
}

func TestPoolClose(t *testing.T) {
	p := newSelfPool(t, nil)
	pid := pidOf(t, p, "self")
	ts, _ := p.Tools(context.Background())
	p.Close()
	err := syscall.Kill(pid, 0)
	require.ErrorIs(t, err, syscall.ESRCH, "the stdio child is gone after Close")
	res := ts[0].Run(context.Background(), tools.Env{}, nil)
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "closed")
	p.Close() // idempotent
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
