package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// probe is one GET of a health endpoint: its status and JSON body, or why there is none.
type probe struct {
	status int
	body   map[string]any
	err    error
}

func getProbe(url string) (probe, error) {
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return probe{err: err}, err
	}
	defer resp.Body.Close()
	p := probe{status: resp.StatusCode}
	p.err = json.NewDecoder(resp.Body).Decode(&p.body)
	return p, p.err
}

// failing are the names /ready gave as failing.
func (p probe) failing() []string {
	var out []string
	list, _ := p.body["failing"].([]any)
	for _, v := range list {
		out = append(out, fmt.Sprint(v))
	}
	return out
}

// TestReadyFollowsTemporal: the gateway (on gateway.port from its config)
// and a worker (on --health-addr) answer /health at once and /ready with 200
// once their workers poll; when temporal-dev goes away /ready turns 503
// naming the Temporal check, while /health stays 200.
func TestReadyFollowsTemporal(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New()
	defer model.Close()
	gatewayPort, workerPort := testenv.FreePort(t), testenv.FreePort(t)
	home := testenv.NewHome(t, model.URL(), map[string]any{"gateway": map[string]any{"port": gatewayPort}})
	// The harness's NANOBOT_HEALTH_ADDR would win over gateway.port, which is what the gateway is tested on.
	env := slices.DeleteFunc(home.Env(dev.Addr), func(kv string) bool { return strings.HasPrefix(kv, "NANOBOT_HEALTH_ADDR=") })
	_, gwOut, gwErr := startNanobot(t, env, "gateway")
	_, wOut, wErr := startNanobot(t, env, "worker", "--health-addr", fmt.Sprintf("127.0.0.1:%d", workerPort))
	endpoints := map[string]string{
		"gateway": fmt.Sprintf("http://127.0.0.1:%d", gatewayPort),
		"worker":  fmt.Sprintf("http://127.0.0.1:%d", workerPort),
	}
	for command, base := range endpoints {
		var last probe
		require.Eventually(t, func() bool {
			p, err := getProbe(base + "/ready")
			last = p
			return err == nil && p.status == http.StatusOK
		}, time.Minute, 100*time.Millisecond, "%s never ready: %v\n%s\n%s\n%s\n%s", command, last, gwOut, gwErr, wOut, wErr)
		require.Equal(t, true, last.body["ready"])
		names := ""
		for _, c := range last.body["checks"].([]any) {
			names += c.(map[string]any)["name"].(string) + " "
		}
		require.Equal(t, "temporal workers ", names, "a plain home: no channel, no database")

		health, err := getProbe(base + "/health")
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, health.status)
		require.Equal(t, "alive", health.body["status"])
		require.Equal(t, command, health.body["command"])
	}
	require.Contains(t, gwOut.String(), fmt.Sprintf("Health:   http://127.0.0.1:%d/health, /ready\n", gatewayPort))

	dev.Stop()
	for command, base := range endpoints {
		var last probe
		require.Eventually(t, func() bool {
			p, err := getProbe(base + "/ready")
			last = p
			return err == nil && p.status == http.StatusServiceUnavailable && slices.Contains(p.failing(), "temporal")
		}, time.Minute, 100*time.Millisecond, "%s still ready without Temporal: %v", command, last)
		require.Equal(t, false, last.body["ready"])
		health, err := getProbe(base + "/health")
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, health.status, "%s is alive without Temporal", command)
	}
}
