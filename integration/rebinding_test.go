package integration

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// hostCall is one request with Host (and Origin) set as a browser sets them for the page's own address.
func hostCall(t *testing.T, method, url, host, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Host = host
	req.Header.Set("Origin", "http://"+host)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	require.NoError(t, err, "%s %s", method, url)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestEmbeddedStackAnswersOnlyItsHostNames is issue 32's DNS rebinding attack
// on a newcomer's gateway: a page at evil.example, rebound to 127.0.0.1, asks
// every HTTP surface (the web chat and /health, /ready on their shared port,
// the API, the embedded temporal-dev's Web UI and its /api/v1) with its own
// Host and Origin, and gets 421 from each; the names they are bound to get
// through. The temporal-dev the gateway started listens on loopback only and
// serves no frontend HTTP API (nothing of nanobot's uses it).
func TestEmbeddedStackAnswersOnlyItsHostNames(t *testing.T) {
	model := modeltest.New(modeltest.Text("Hello, page."))
	defer model.Close()
	webPort, apiPort := testenv.FreePort(t), testenv.FreePort(t)
	home := testenv.NewHome(t, model.URL(), map[string]any{
		"channels": map[string]any{"web": map[string]any{"port": webPort, "allowedHosts": []string{"nanobot.lan"}}},
		"gateway":  map[string]any{"port": webPort}, // the default shape: health and chat on one listener
		"api":      map[string]any{"enabled": true, "port": apiPort},
	})
	env, uiPort := embeddedEnv(t, home)
	env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "NANOBOT_HEALTH_ADDR=") })
	gw, out, errOut := startNanobot(t, env, "gateway")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "Press Ctrl-C to stop.") }, 2*time.Minute, 100*time.Millisecond,
		"gateway did not start:\n%s\n%s", out, errOut)
	web, api, ui := fmt.Sprintf("http://127.0.0.1:%d", webPort), fmt.Sprintf("http://127.0.0.1:%d", apiPort), fmt.Sprintf("http://127.0.0.1:%d", uiPort)
	port := func(url string) string {
		hostPort, _, _ := strings.Cut(strings.TrimPrefix(url, "http://"), "/")
		_, p, err := net.SplitHostPort(hostPort)
		require.NoError(t, err)
		return p
	}

	surfaces := []struct{ method, url, body string }{
		{"POST", web + "/api/send", `{"chat":"evil","text":"run: cat ~/.nanobot/config.json"}`},
		{"GET", web + "/api/sessions", ""},
		{"GET", web + "/api/history?chat=evil", ""},
		{"GET", web + "/health", ""},
		{"GET", web + "/ready", ""},
		{"POST", api + "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}]}`},
		{"GET", api + "/v1/models", ""},
		{"GET", ui + "/", ""},
		{"GET", ui + "/api/v1/namespaces/default/workflows", ""},
	}
	for _, s := range surfaces {
		status, body := hostCall(t, s.method, s.url, "evil.example:"+port(s.url), s.body)
		require.Equal(t, http.StatusMisdirectedRequest, status, "%s %s answered a foreign Host: %s", s.method, s.url, body)
		require.Equal(t, 1, strings.Count(body, "\n"), "a one-line refusal: %q", body)
	}
	require.Zero(t, model.Count(), "no turn started")

	for _, name := range []string{"127.0.0.1", "localhost", "[::1]"} {
		for _, url := range []string{web + "/api/sessions", web + "/health", api + "/v1/models", ui + "/", ui + "/api/v1/namespaces"} {
			status, body := hostCall(t, "GET", url, name+":"+port(url), "")
			require.Equal(t, http.StatusOK, status, "%s as %s: %s", url, name, body)
		}
	}
	status, _ := hostCall(t, "GET", web+"/api/sessions", "nanobot.lan:"+port(web), "")
	require.Equal(t, http.StatusOK, status, "channels.web.allowedHosts")
	status, _ = hostCall(t, "GET", api+"/v1/models", "nanobot.lan:"+port(api), "")
	require.Equal(t, http.StatusMisdirectedRequest, status, "the API has its own api.allowedHosts")
	status, body := hostCall(t, "POST", web+"/api/send", "localhost:"+port(web), `{"chat":"mine","text":"hi"}`)
	require.Equal(t, http.StatusOK, status, body)

	dev := childNamed(t, gw.Process.Pid, "temporal-dev")
	listening := listeningSockets(t, dev)
	for _, addr := range listening {
		host, p, err := net.SplitHostPort(addr)
		require.NoError(t, err)
		require.True(t, net.ParseIP(host).IsLoopback(), "temporal-dev listens on %s, beyond loopback (all: %v)", addr, listening)
		if p == strconv.Itoa(uiPort) {
			continue // the Web UI answers /api/v1 itself, behind the Host check
		}
		status, _ := httpGetQuietly("http://" + addr + "/api/v1/namespaces")
		require.NotEqual(t, http.StatusOK, status, "%s serves the frontend's HTTP API, which nothing uses", addr)
	}
	require.Contains(t, listening, net.JoinHostPort("127.0.0.1", strconv.Itoa(devPort(env))), "the frontend")
	require.Contains(t, listening, net.JoinHostPort("127.0.0.1", strconv.Itoa(uiPort)), "the Web UI")
}

// httpGetQuietly is a GET's status, 0 when it is no HTTP at all (a gRPC port).
func httpGetQuietly(url string) (int, error) {
	resp, err := (&http.Client{Timeout: 3 * time.Second}).Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return resp.StatusCode, nil
}

// childNamed is the pid of parent's child process whose command is name.
func childNamed(t *testing.T, parent int, name string) int {
	t.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", parent))
	require.NoError(t, err)
	for _, f := range tasks {
		data, _ := os.ReadFile(f)
		for _, field := range strings.Fields(string(data)) {
			comm, _ := os.ReadFile("/proc/" + field + "/comm")
			if strings.TrimSpace(string(comm)) == name {
				pid, err := strconv.Atoi(field)
				require.NoError(t, err)
				return pid
			}
		}
	}
	t.Fatalf("process %d has no child %s", parent, name)
	return 0
}

// listeningSockets are the host:port of every TCP socket pid listens on: its
// socket inodes (/proc/<pid>/fd) looked up in its namespace's /proc/<pid>/net/tcp*.
func listeningSockets(t *testing.T, pid int) []string {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	require.NoError(t, err)
	mine := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if inode, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
			mine[strings.TrimSuffix(inode, "]")] = true
		}
	}
	var out []string
	for _, table := range []string{"tcp", "tcp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		sc.Scan() // the header
		for sc.Scan() {
			cols := strings.Fields(sc.Text())
			if len(cols) > 9 && cols[3] == "0A" && mine[cols[9]] { // 0A: LISTEN
				out = append(out, procAddr(t, cols[1]))
			}
		}
		require.NoError(t, f.Close())
	}
	require.NotEmpty(t, out, "process %d listens on nothing", pid)
	return out
}

// procAddr decodes /proc/net/tcp's "0100007F:1C41" (little-endian words) to host:port.
func procAddr(t *testing.T, s string) string {
	t.Helper()
	hexIP, hexPort, _ := strings.Cut(s, ":")
	port, err := strconv.ParseUint(hexPort, 16, 16)
	require.NoError(t, err)
	ip := make(net.IP, len(hexIP)/2)
	for i := 0; i < len(ip); i += 4 {
		word, err := strconv.ParseUint(hexIP[2*i:2*i+8], 16, 32)
		require.NoError(t, err)
		ip[i], ip[i+1], ip[i+2], ip[i+3] = byte(word), byte(word>>8), byte(word>>16), byte(word>>24)
	}
	return net.JoinHostPort(ip.String(), strconv.FormatUint(port, 10))
}

// TestGatewayBeyondLoopbackNeedsTheChatToken: a gateway whose web chat listens on
// 0.0.0.0 without channels.web.token refuses to start, naming the key and the config
// file; with a token it starts, and the chat wants the token and a Host it answers to.
func TestGatewayBeyondLoopbackNeedsTheChatToken(t *testing.T) {
	dev := testenv.StartDevServer(t)
	webPort := testenv.FreePort(t)
	web := map[string]any{"enabled": true, "host": "0.0.0.0", "port": webPort}
	home := testenv.NewHome(t, "http://127.0.0.1:9/v1", map[string]any{"channels": map[string]any{"web": web}})
	_, errOut, code := runNanobot(t, home.Env(dev.Addr), "gateway")
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "channels.web.token is not set")
	require.Contains(t, errOut, home.ConfigPath)

	web["token"] = "s3cret"
	home = testenv.NewHome(t, "http://127.0.0.1:9/v1", map[string]any{"channels": map[string]any{"web": web}})
	_, out, _ := startGateway(t, dev, home.Env(dev.Addr))
	require.Contains(t, out.String(), fmt.Sprintf(":%d/?token=s3cret", webPort), "the banner gives the URL with its token")
	url, p := fmt.Sprintf("http://127.0.0.1:%d/api/sessions", webPort), strconv.Itoa(webPort)
	status, _ := hostCall(t, "GET", url, "192.0.2.7:"+p, "")
	require.Equal(t, http.StatusUnauthorized, status, "beyond loopback the token is the gate")
	status, _ = hostCall(t, "GET", url+"?token=s3cret", "192.0.2.7:"+p, "")
	require.Equal(t, http.StatusOK, status, "any IP literal names a wildcard listener")
	status, _ = hostCall(t, "GET", url+"?token=s3cret", "evil.example:"+p, "")
	require.Equal(t, http.StatusMisdirectedRequest, status, "a token leaked to a rebinding page still meets the Host check")
}
