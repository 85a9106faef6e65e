package tools

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/tools/sandboxfwd"
)

// netSandbox is a sandbox over a fresh workspace whose proxy's guard
// whitelists the test target's 127.0.0.5 alone and resolves with egressResolver.
func netSandbox(t *testing.T, network bool, allow ...string) *Sandbox {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	guard, err := NewSSRFGuard([]string{"127.0.0.5/32"}, egressResolver)
	require.NoError(t, err)
	sb := NewSandbox(SandboxLayout{Workspace: ws, Network: network})
	sb.Egress = EgressRules{Guard: guard, AllowDomains: allow}
	t.Cleanup(func() { _ = sb.Close() })
	return sb
}

func runInSandbox(t *testing.T, sb *Sandbox, script string) (string, error) {
	t.Helper()
	cmd, err := sb.Command(context.Background(), "", "bash", "-c", script)
	require.NoError(t, err)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// hostListener counts the connections that reach a port on the host's loopback.
func hostListener(t *testing.T) (port string, accepted *atomic.Int32) {
	addr, accepted := testenv.CountAccepts(t, "127.0.0.1:0")
	_, port, _ = net.SplitHostPort(addr)
	return port, accepted
}

// fetchScript fetches url inside the sandbox through the proxy variables and
// prints the body then the HTTP status: with curl where it is installed, else
// by hand over bash's /dev/tcp to the forwarder. tunnel asks for CONNECT.
func fetchScript(url string, tunnel bool) string {
	if _, err := exec.LookPath("curl"); err == nil {
		flags := "--noproxy ''" // even a loopback target goes to the proxy
		if tunnel {
			flags += " --proxytunnel"
		}
		return fmt.Sprintf("curl -sS --max-time 30 %s -w ' %%{http_code}%%{http_connect}' %s", flags, url)
	}
	hostPort := strings.TrimPrefix(url, "http://")
	hostPort = strings.TrimSuffix(hostPort, "/")
	req := fmt.Sprintf(`GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n`, url, hostPort)
	if tunnel {
		req = fmt.Sprintf(`CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\nGET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n`, hostPort, hostPort, hostPort)
	}
	return fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d && printf '%s' >&3 && cat <&3`, sandboxfwd.Port, req)
}

// From inside, the host's loopback has no route, with or without the proxy.
func TestSandboxHasNoRouteToTheHost(t *testing.T) {
	requireBwrap(t)
	port, accepted := hostListener(t)
	for _, network := range []bool{true, false} {
		out, err := runInSandbox(t, netSandbox(t, network), "exec 3<>/dev/tcp/127.0.0.1/"+port+" && echo connected")
		require.Error(t, err, "network %v: %s", network, out)
		require.NotContains(t, out, "connected")
		require.Contains(t, out, "Connection refused", "the sandbox's own loopback has nothing there")
	}
	require.Zero(t, accepted.Load(), "nothing reached the host's port")
}

// Outbound HTTP goes through the proxy: an allowed target answers, the
// host's loopback and a host off the allow list get the proxy's 403.
func TestSandboxReachesTheNetworkOnlyThroughTheProxy(t *testing.T) {
	requireBwrap(t)
	target := egressTarget(t)
	port, accepted := hostListener(t)
	sb := netSandbox(t, true)
	for _, tunnel := range []bool{false, true} {
		out, err := runInSandbox(t, sb, fetchScript("http://allowed.test:"+target+"/", tunnel))
		require.NoError(t, err, out)
		require.Contains(t, out, "hello from the target, host allowed.test:"+target, "tunnel %v", tunnel)

		out, _ = runInSandbox(t, sb, fetchScript("http://127.0.0.1:"+port+"/", tunnel))
		require.Contains(t, out, "403", "tunnel %v: %s", tunnel, out)
		if !tunnel { // curl shows a refused CONNECT's status, not its body
			require.Contains(t, out, "nanobot sandbox proxy refused 127.0.0.1:"+port+": 127.0.0.1 is a loopback address")
		}
	}
	require.Zero(t, accepted.Load(), "the proxy never connected to the host's loopback")

	listed := netSandbox(t, true, "allowed.test")
	out, _ := runInSandbox(t, listed, fetchScript("http://other.test:"+target+"/", false))
	require.Contains(t, out, "other.test is not in tools.exec.sandboxAllowDomains", out)
	out, err := runInSandbox(t, listed, fetchScript("http://allowed.test:"+target+"/", false))
	require.NoError(t, err, out)
	require.Contains(t, out, "hello from the target")
}

// The forwarder is invisible to the command: stdio, exit status and cwd pass through.
func TestSandboxForwarderPassesTheCommandThrough(t *testing.T) {
	requireBwrap(t)
	sb := netSandbox(t, true)
	cmd, err := sb.Command(context.Background(), "", "bash", "-c", `read line; echo "got $line"; echo err >&2; env | grep -c '^HTTPS_PROXY=http://127.0.0.1:3128$'; exit 7`)
	require.NoError(t, err)
	cmd.Stdin = strings.NewReader("hello\n")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exitErr *exec.ExitError
	require.ErrorAs(t, err, &exitErr)
	require.Equal(t, 7, exitErr.ExitCode())
	require.Equal(t, "got hello\n1\n", stdout.String())
	require.Equal(t, "err\n", stderr.String())
	// A bare name is looked up on PATH inside, as execvp would; a missing one exits 127.
	out, err := sb.Command(context.Background(), "", "sh", "-c", "echo found")
	require.NoError(t, err)
	got, err := out.CombinedOutput()
	require.NoError(t, err, string(got))
	require.Equal(t, "found\n", string(got))
	missing, err := sb.Command(context.Background(), "", "no-such-program-here")
	require.NoError(t, err)
	got, err = missing.CombinedOutput()
	require.ErrorAs(t, err, &exitErr)
	require.Equal(t, 127, exitErr.ExitCode())
	require.Contains(t, string(got), "no-such-program-here: command not found")

	_, statErr := os.Stat(filepath.Dir(sb.proxy.p.Socket()))
	require.NoError(t, statErr)
	require.NoError(t, sb.Close())
	_, statErr = os.Stat(filepath.Dir(sb.proxy.p.Socket()))
	require.ErrorIs(t, statErr, os.ErrNotExist, "Close removes the proxy's folder")
}
