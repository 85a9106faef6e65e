package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/secrets"
	"github.com/nanobot-durable/nanobot/workers"
)

// readyBody is /ready's answer.
type readyBody struct {
	Ready   bool          `json:"ready"`
	Failing []string      `json:"failing"`
	Checks  []checkResult `json:"checks"`
}

func getReady(t *testing.T, h *healthServer) (int, readyBody) {
	t.Helper()
	resp, err := http.Get("http://" + h.Addr() + "/ready")
	require.NoError(t, err)
	defer resp.Body.Close()
	var body readyBody
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	return resp.StatusCode, body
}

func startHealth(t *testing.T, redact *secrets.Set) *healthServer {
	t.Helper()
	cfg := config.Default()
	require.NoError(t, cfg.SetChannelBlock("web", map[string]any{"allowedHosts": []string{"nanobot.lan"}}))
	h, err := listenHealth("127.0.0.1:0", "test", "gateway", cfg, redact, slog.Default())
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Shutdown(context.Background()) })
	return h
}

// deadAddr is a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// pollers is a workers.Set as the workers check sees it.
type pollers struct {
	err      error
	polled   []workers.PolledQueue
	identity string
}

func (p pollers) Err() error                    { return p.err }
func (p pollers) Polled() []workers.PolledQueue { return p.polled }
func (p pollers) Identity() string              { return p.identity }

// switchChannel is a channel whose connection the test sets.
type switchChannel struct {
	name string
	up   bool
}

func (c *switchChannel) Name() string                                  { return c.name }
func (c *switchChannel) Start(context.Context, channels.Publish) error { return nil }
func (c *switchChannel) Stop(context.Context) error                    { return nil }
func (c *switchChannel) Send(context.Context, channels.Reply) error    { return nil }
func (c *switchChannel) Connected() bool                               { return c.up }

// Every check that fails is named in a 503, with why: Temporal and the
// database refusing connections (real clients at a dead port), no poller
// of ours on a queue, a channel down; a secret in an error is masked.
func TestReadyNamesEachFailingCheck(t *testing.T) {
	h := startHealth(t, secrets.FromConfig(map[string]string{"token": "hunter2-hunter2"}, nil))
	code, body := getReady(t, h)
	require.Equal(t, http.StatusServiceUnavailable, code, "not ready before the checks are set")
	require.Equal(t, []string{"process"}, body.Failing)
	require.Equal(t, "starting", body.Checks[0].Error)

	lazy, err := client.NewLazyClient(client.Options{HostPort: deadAddr(t)})
	require.NoError(t, err)
	defer lazy.Close()
	pool, err := pgxpool.New(context.Background(), "postgres://nanobot:hunter2-hunter2@"+deadAddr(t)+"/nanobot?connect_timeout=2")
	require.NoError(t, err)
	defer pool.Close()
	queues := []workers.PolledQueue{{Name: "nanobot", Type: enumspb.TASK_QUEUE_TYPE_WORKFLOW}, {Name: "nanobot-llm", Type: enumspb.TASK_QUEUE_TYPE_ACTIVITY}}
	seen := map[string][]string{"nanobot": {"1@h@nanobot-gateway"}, "nanobot-llm": {"2@other@nanobot-worker"}}
	live := func(_ context.Context, q workers.PolledQueue) ([]string, error) { return seen[q.Name], nil }
	mgr := channels.NewManager()
	telegram := &switchChannel{name: "telegram"}
	mgr.Add(telegram)
	require.Empty(t, mgr.Start(context.Background(), nil))
	h.setChecks([]readyCheck{
		{"temporal", temporalCheck(lazy)},
		{"workers", workersCheck(pollers{polled: queues, identity: "1@h@nanobot-gateway"}, live)},
		{"channels", channelsCheck(mgr, []string{"slack", "telegram"})},
		{"database", databaseCheck(pool)},
	})

	code, body = getReady(t, h)
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.False(t, body.Ready)
	require.Equal(t, []string{"temporal", "workers", "channels", "database"}, body.Failing)
	byName := map[string]string{}
	for _, c := range body.Checks {
		byName[c.Name] = c.Error
	}
	require.Contains(t, byName["temporal"], "temporal frontend")
	require.Equal(t, "the server sees no poller of this process on nanobot-llm (activity)", byName["workers"])
	require.Equal(t, "slack: not running; telegram: not connected", byName["channels"])
	require.Contains(t, byName["database"], "database:")
	require.NotContains(t, fmt.Sprint(body), "hunter2-hunter2")

	// The same checks pass once what they check is there.
	telegram.up = true
	seen["nanobot-llm"] = append(seen["nanobot-llm"], "1@h@nanobot-gateway")
	h.setChecks([]readyCheck{
		{"workers", workersCheck(pollers{polled: queues, identity: "1@h@nanobot-gateway"}, live)},
		{"channels", channelsCheck(mgr, []string{"telegram"})},
	})
	code, body = getReady(t, h)
	require.Equal(t, http.StatusOK, code, body)
	require.True(t, body.Ready)
	require.Empty(t, body.Failing)
	require.Equal(t, []checkResult{{Name: "workers", OK: true}, {Name: "channels", OK: true}}, body.Checks)

	h.setChecks([]readyCheck{{"workers", workersCheck(pollers{err: errors.New("namespace gone"), polled: queues}, live)}})
	_, body = getReady(t, h)
	require.Equal(t, "a worker stopped: namespace gone", body.Checks[0].Error)

	h.stopping()
	code, body = getReady(t, h)
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, "stopping", body.Checks[0].Error)

	resp, err := http.Get("http://" + h.Addr() + "/health")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "alive while it stops")
}

// Where the endpoints listen: the flag, then the variable, then (for the
// gateway only) gateway.host:gateway.port; "off" and a port of 0 or less turn them off.
func TestHealthAddrFollowsFlagEnvAndGatewayPort(t *testing.T) {
	cfg := config.Default()
	cfg.Path = "/x/config.json"
	parse := func(env string, args ...string) *flag.FlagSet {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.String("health-addr", env, "")
		require.NoError(t, fs.Parse(args))
		return fs
	}
	for _, c := range []struct {
		name, command, env string
		args               []string
		port               int
		addr, key          string
	}{
		{"gateway default", "gateway", "", nil, 18790, "127.0.0.1:18790", "gateway.port (/x/config.json)"},
		{"gateway port 0", "gateway", "", nil, 0, "", ""},
		{"gateway port -1", "gateway", "", nil, -1, "", ""},
		{"worker ignores gateway.port", "worker", "", nil, 18790, "", ""},
		{"worker flag", "worker", "", []string{"--health-addr", "0.0.0.0:9000"}, 18790, "0.0.0.0:9000", "--health-addr"},
		{"env", "serve", "127.0.0.1:0", nil, 18790, "127.0.0.1:0", healthAddrEnv},
		{"flag wins over env", "gateway", "127.0.0.1:0", []string{"--health-addr", "127.0.0.1:1"}, 18790, "127.0.0.1:1", "--health-addr"},
		{"off", "gateway", "", []string{"--health-addr", "off"}, 18790, "", ""},
	} {
		cfg.Gateway.Port = c.port
		addr, key := healthAddr(c.command, parse(c.env, c.args...), cfg)
		require.Equal(t, c.addr, addr, c.name)
		require.Equal(t, c.key, key, c.name)
	}
}

// A taken gateway.port stops the gateway at start, naming the key, before
// it reaches for Temporal.
func TestGatewayPortInUseNamesTheKey(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(healthAddrEnv, "")
	t.Setenv("TEMPORAL_ADDRESS", deadAddr(t))
	cfgPath := filepath.Join(home, ".nanobot", "config.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(cfgPath), 0o700))
	require.NoError(t, os.WriteFile(cfgPath, []byte(`{"gateway": {"port": `+strconv.Itoa(port)+`}}`), 0o600))
	var out, errOut bytes.Buffer
	require.Equal(t, 1, run([]string{"--config", cfgPath, "gateway"}, nil, &out, &errOut), out.String())
	require.Contains(t, errOut.String(), "nanobot: gateway.port ("+cfgPath+"): 127.0.0.1:"+strconv.Itoa(port)+" is already in use")
	require.NotContains(t, out.String(), "nanobot gateway running")
}

// A foreign Host (a page rebound to this machine) gets 421 from /health and
// /ready; the names the listener is bound to and channels.web.allowedHosts
// (the web chat may share this listener) get through.
func TestHealthAnswersOnlyItsHostNames(t *testing.T) {
	h := startHealth(t, secrets.FromConfig(nil, nil))
	_, port, err := net.SplitHostPort(h.Addr())
	require.NoError(t, err)
	get := func(path, host string) int {
		req, err := http.NewRequest(http.MethodGet, "http://"+h.Addr()+path, nil)
		require.NoError(t, err)
		req.Host = host
		req.Header.Set("Origin", "http://"+host)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		return resp.StatusCode
	}
	for _, path := range []string{"/health", "/ready"} {
		require.Equal(t, http.StatusMisdirectedRequest, get(path, "evil.example:"+port), path)
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port, "nanobot.lan:" + port} {
		require.Equal(t, http.StatusOK, get("/health", host), host)
		require.Equal(t, http.StatusServiceUnavailable, get("/ready", host), host+": starting, but answered")
	}
}
