package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/peer"
	"github.com/nanobot-durable/nanobot/tools"
)

// Integration tests against the real npm MCP servers that e2e/install.sh
// puts in e2e/node_modules. Without them the peer is missing: the tests
// skip locally and fail under CI (or NANOBOT_REQUIRE_PEERS=1, as make e2e sets).

const e2eHint = "the MCP servers are not installed in e2e/node_modules: install Node.js and npm, then run make e2e (e2e/install.sh)"

var e2eBinDir = filepath.Join("..", "e2e", "node_modules", ".bin")

// e2eMissing says why the real servers cannot run, or "" when they can.
func e2eMissing() string {
	if _, err := exec.LookPath("node"); err != nil {
		return "node not found on PATH; " + e2eHint
	}
	for _, bin := range []string{"mcp-server-everything", "mcp-server-filesystem"} {
		if _, err := os.Stat(filepath.Join(e2eBinDir, bin)); err != nil {
			return e2eHint
		}
	}
	return ""
}

// announceE2E prints the skip reason once, where go test -v and a failing
// run show it, since t.Skip alone is easy to miss.
func announceE2E() {
	if why := e2eMissing(); why != "" {
		fmt.Fprintf(os.Stderr, "mcp: SKIPPING real-server tests: %s\n", why)
	}
}

// e2eBin returns the absolute path of an installed server, or skips.
func e2eBin(t *testing.T, name string) string {
	t.Helper()
	if why := e2eMissing(); why != "" {
		peer.Missing(t, peer.MCPServers, why)
	}
	p, err := filepath.Abs(filepath.Join(e2eBinDir, name))
	require.NoError(t, err)
	peer.Used(t, peer.MCPServers)
	return p
}

func byName(t *testing.T, p *Pool) map[string]tools.Tool {
	t.Helper()
	ts, errs := p.Tools(context.Background())
	require.Empty(t, errs)
	out := map[string]tools.Tool{}
	for _, tool := range ts {
		out[tool.Name()] = tool
	}
	return out
}

// checkEverything runs the checks shared by every server-everything transport,
// through a registry so its schemas must compile and validate our arguments.
func checkEverything(t *testing.T, p *Pool) {
	t.Helper()
	reg := tools.NewRegistry()
	require.Empty(t, p.Register(context.Background(), reg), "every server-everything tool registers")
	ts := byName(t, p)
	require.Equal(t, tools.Flags{ReadOnly: true}, ts["mcp_everything_echo"].Flags())
	require.Equal(t, tools.Flags{SideEffects: true}, ts["mcp_everything_toggle-simulated-logging"].Flags())

	ctx := context.Background()
	require.Equal(t, tools.Result{Text: "Echo: hello"}, reg.Execute(ctx, tools.Env{}, "mcp_everything_echo", `{"message":"hello"}`))
	require.Equal(t, "The sum of 2 and 3 is 5.", reg.Execute(ctx, tools.Env{}, "mcp_everything_get-sum", `{"a":2,"b":3}`).Text)
	img := reg.Execute(ctx, tools.Env{}, "mcp_everything_get-tiny-image", `{}`)
	require.False(t, img.IsError, img.Text)
	require.Regexp(t, `\[image: image/png, \d+ bytes\]`, img.Text)
	require.NotContains(t, img.Text, "iVBOR", "no base64 in the model's context")
	bad := reg.Execute(ctx, tools.Env{}, "mcp_everything_get-sum", `{"a":"two"}`)
	require.True(t, bad.IsError, "our registry validates against the server's schema")
	checkEverythingExtras(t, reg)
}

func TestE2EEverythingStdio(t *testing.T) {
	bin := e2eBin(t, "mcp-server-everything")
	logs := &captureHandler{}
	p := NewPool(map[string]config.MCPServer{"everything": {Command: bin, Args: []string{"stdio"}}}, slog.New(logs))
	defer p.Close()
	// The server sends tools/list_changed before its initialize response;
	// connecting at all proves the client accepts it.
	checkEverything(t, p)
	require.True(t, logs.has("notifications/tools/list_changed"))

	// Log notifications arrive between calls and do not disturb them.
	ts := byName(t, p)
	res := ts["mcp_everything_toggle-simulated-logging"].Run(context.Background(), tools.Env{}, nil)
	require.False(t, res.IsError, res.Text)
	waitFor(t, func() bool { return logs.has("notifications/message") })
	res = ts["mcp_everything_echo"].Run(context.Background(), tools.Env{}, map[string]any{"message": "still here"})
	require.Equal(t, "Echo: still here", res.Text)
}

// captureHandler records log lines so tests can see which notifications came.
type captureHandler struct {
	mu    sync.Mutex
	lines []string
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *captureHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *captureHandler) WithGroup(string) slog.Handler            { return h }
func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	line := r.Message
	r.Attrs(func(a slog.Attr) bool { line += " " + a.String(); return true })
	h.mu.Lock()
	h.lines = append(h.lines, line)
	h.mu.Unlock()
	return nil
}

func (h *captureHandler) has(sub string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, l := range h.lines {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

func TestE2EEverythingStreamableHTTP(t *testing.T) {
	port := startEverything(t, "streamableHttp")
	p := NewPool(map[string]config.MCPServer{"everything": {URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)}}, nil)
	defer p.Close()
	checkEverything(t, p)
}

func TestE2EEverythingSSE(t *testing.T) {
	port := startEverything(t, "sse")
	p := NewPool(map[string]config.MCPServer{"everything": {URL: fmt.Sprintf("http://127.0.0.1:%d/sse", port)}}, nil)
	defer p.Close()
	checkEverything(t, p)
}

func TestE2EEverythingKilledMidCall(t *testing.T) {
	bin := e2eBin(t, "mcp-server-everything")
	p := NewPool(map[string]config.MCPServer{"everything": {Command: bin, Args: []string{"stdio"}}}, nil)
	defer p.Close()
	ts := byName(t, p)
	s := p.servers["everything"]
	s.mu.Lock()
	proc := s.conn.cmd.Process
	s.mu.Unlock()

	done := make(chan tools.Result, 1)
	go func() {
		done <- ts["mcp_everything_trigger-long-running-operation"].Run(context.Background(), tools.Env{},
			map[string]any{"duration": 20, "steps": 20})
	}()
	time.Sleep(1500 * time.Millisecond)
	require.NoError(t, proc.Kill())
	select {
	case res := <-done:
		require.True(t, res.IsError)
		require.Contains(t, res.Text, "Error: MCP server 'everything' failed:")
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not end when the server died")
	}
	res := ts["mcp_everything_echo"].Run(context.Background(), tools.Env{}, map[string]any{"message": "again"})
	require.Equal(t, tools.Result{Text: "Echo: again"}, res, "the next call reconnects")
	s.mu.Lock()
	require.NotEqual(t, proc.Pid, s.conn.cmd.Process.Pid)
	s.mu.Unlock()
}

func TestE2EFilesystem(t *testing.T) {
	bin := e2eBin(t, "mcp-server-filesystem")
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "note.txt"), []byte("inside the sandbox\n"), 0o644))
	outside := filepath.Join(t.TempDir(), "secret.txt")
	require.NoError(t, os.WriteFile(outside, []byte("outside"), 0o644))

	p := NewPool(map[string]config.MCPServer{"fs": {Command: bin, Args: []string{root},
		EnabledTools: []string{"read_text_file", "mcp_fs_write_file"}}}, nil)
	defer p.Close()
	ts := byName(t, p)
	require.Len(t, ts, 2, "enabledTools by raw and by wrapped name")
	require.Equal(t, tools.Flags{ReadOnly: true}, ts["mcp_fs_read_text_file"].Flags())
	require.Equal(t, tools.Flags{SideEffects: true}, ts["mcp_fs_write_file"].Flags())

	read := ts["mcp_fs_read_text_file"]
	res := read.Run(context.Background(), tools.Env{}, map[string]any{"path": filepath.Join(root, "note.txt")})
	require.Equal(t, tools.Result{Text: "inside the sandbox\n"}, res)

	res = read.Run(context.Background(), tools.Env{}, map[string]any{"path": outside})
	require.True(t, res.IsError, res.Text)
	require.True(t, strings.HasPrefix(res.Text, "Error"), res.Text)
	require.Contains(t, res.Text, "outside allowed directories")
}

// startEverything runs server-everything over HTTP on a free port and waits
// until it accepts connections. It binds all interfaces; tests only.
func startEverything(t *testing.T, mode string) int {
	t.Helper()
	bin := e2eBin(t, "mcp-server-everything")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())

	cmd := exec.Command(bin, mode)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	out := startPeerProcess(t, cmd)
	waitListening(t, port, out, "server-everything "+mode)
	return port
}

// startPeerProcess starts a server process for the test, its output kept
// for failure messages, and kills it when the test ends.
func startPeerProcess(t *testing.T, cmd *exec.Cmd) *tailBuffer {
	t.Helper()
	out := &tailBuffer{max: 4096}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return out
}

// waitListening waits until what listens on 127.0.0.1:port accepts.
func waitListening(t *testing.T, port int, out *tailBuffer, what string) {
	t.Helper()
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, 20*time.Second, 50*time.Millisecond, "%s did not listen on %d: %s", what, port, out.lastLine())
}
