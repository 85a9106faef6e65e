package tools

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
)

// egressTarget is an HTTP server on 127.0.0.5, the one loopback address the
// tests' guard whitelists (by its /32); every other loopback address stays refused.
func egressTarget(t *testing.T) (port string) {
	t.Helper()
	addr := testenv.ServeHTTP(t, "127.0.0.5:0", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from the target, host %s", r.Host)
	})
	_, port, _ = net.SplitHostPort(addr)
	return port
}

// egressResolver answers names as DNS would here: allowed.test and its
// subdomain to the whitelisted target, sneaky.test to the host's loopback.
var egressResolver = fakeResolver{
	"allowed.test": {"127.0.0.5"}, "api.allowed.test": {"127.0.0.5"},
	"other.test": {"127.0.0.5"}, "sneaky.test": {"127.0.0.1"},
}

func startTestProxy(t *testing.T, allow ...string) (*SandboxProxy, *testenv.SyncBuffer) {
	t.Helper()
	guard, err := NewSSRFGuard([]string{"127.0.0.5/32"}, egressResolver)
	require.NoError(t, err)
	logs := &testenv.SyncBuffer{}
	p, err := StartSandboxProxy(EgressRules{Guard: guard, AllowDomains: allow, Log: slog.New(slog.NewTextHandler(logs, nil))})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p, logs
}

// viaConnect asks the proxy for a tunnel to target and, once open, sends a
// GET through it; it returns the proxy's status and the body of whichever answered.
func viaConnect(t *testing.T, p *SandboxProxy, target string) (int, string) {
	t.Helper()
	c, err := net.Dial("unix", p.Socket())
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target)
	inner, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	body, _ := io.ReadAll(inner.Body)
	return resp.StatusCode, string(body)
}

// viaPlain sends an absolute-URI GET to the proxy, as curl does for http://.
func viaPlain(t *testing.T, p *SandboxProxy, target string) (int, string) {
	t.Helper()
	c, err := net.Dial("unix", p.Socket())
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "GET http://%s/ HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target, target)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestSandboxProxyRefusesTheHostAndPrivateRanges(t *testing.T) {
	port := egressTarget(t)
	p, logs := startTestProxy(t)
	cases := []struct{ host, reason string }{
		{"127.0.0.1", "127.0.0.1 is a loopback address"},
		{"127.0.0.2", "127.0.0.2 is a loopback address"},
		{"[::1]", "::1 is a loopback address"},
		{"10.0.0.1", "10.0.0.1 is a private address"},
		{"169.254.169.254", "169.254.169.254 is a link-local address"},
		{"sneaky.test", "sneaky.test resolves to 127.0.0.1, a loopback address"},
	}
	for _, c := range cases {
		target := c.host + ":" + port
		for name, via := range map[string]func(*testing.T, *SandboxProxy, string) (int, string){"CONNECT": viaConnect, "plain": viaPlain} {
			code, body := via(t, p, target)
			require.Equal(t, http.StatusForbidden, code, "%s %s: %s", name, target, body)
			require.Equal(t, "nanobot sandbox proxy refused "+target+": "+c.reason+" "+ssrfNonBypassable+"\n", body, name)
		}
	}
	require.Contains(t, logs.String(), "sandbox proxy refused a request")
	require.Contains(t, logs.String(), "target=sneaky.test:"+port)
}

func TestSandboxProxyRelaysToAnAllowedTarget(t *testing.T) {
	port := egressTarget(t)
	p, _ := startTestProxy(t)
	for _, host := range []string{"allowed.test", "127.0.0.5"} {
		target := host + ":" + port
		code, body := viaConnect(t, p, target)
		require.Equal(t, http.StatusOK, code, body)
		require.Equal(t, "hello from the target, host "+target, body)
		code, body = viaPlain(t, p, target)
		require.Equal(t, http.StatusOK, code, body)
		require.Equal(t, "hello from the target, host "+target, body)
	}
	code, body := viaPlain(t, p, "nowhere.test:"+port)
	require.Equal(t, http.StatusBadGateway, code, "a name that does not resolve is not a refusal")
	require.Contains(t, body, "nowhere.test:"+port+" unreachable")
}

func TestSandboxProxyAllowList(t *testing.T) {
	port := egressTarget(t)
	p, logs := startTestProxy(t, "Allowed.Test")
	for _, host := range []string{"allowed.test", "api.allowed.test"} {
		code, body := viaConnect(t, p, host+":"+port)
		require.Equal(t, http.StatusOK, code, "%s: %s", host, body)
	}
	for _, host := range []string{"other.test", "127.0.0.5", "notallowed.test"} {
		target := host + ":" + port
		for _, via := range []func(*testing.T, *SandboxProxy, string) (int, string){viaConnect, viaPlain} {
			code, body := via(t, p, target)
			require.Equal(t, http.StatusForbidden, code, body)
			require.Equal(t, "nanobot sandbox proxy refused "+target+": "+host+" is not in tools.exec.sandboxAllowDomains\n", body)
		}
	}
	require.Contains(t, logs.String(), "not in tools.exec.sandboxAllowDomains")
}

func TestEgressAllowDomainsCoverSubdomainsOnly(t *testing.T) {
	r := EgressRules{AllowDomains: []string{"example.com", "10.1.2.3", "2.3.4"}}
	for host, want := range map[string]bool{
		"example.com": true, "EXAMPLE.com.": true, "a.b.example.com": true,
		"badexample.com": false, "example.com.evil.net": false, "10.1.2.3": true, "0.10.1.2.3": false, "1.2.3": false, "1.2.3.4": false,
	} {
		require.Equal(t, want, r.hostAllowed(host), host)
	}
	require.True(t, EgressRules{}.hostAllowed("anything.net"), "no list: every host (the guard still applies)")
	require.False(t, strings.Contains(EgressRules{}.describe(), "only"))
}
