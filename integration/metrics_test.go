package integration

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// metricValue sums the samples of name whose labels contain every one of want.
func metricValue(body, name string, want ...string) float64 {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `(\{[^}]*\})? (\S+)$`)
	sum := 0.0
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		ok := true
		for _, w := range want {
			ok = ok && regexp.MustCompile(regexp.QuoteMeta(w)).MatchString(m[1])
		}
		if v, err := strconv.ParseFloat(m[2], 64); ok && err == nil {
			sum += v
		}
	}
	return sum
}

// TestMetricsEndpointAfterATurn scrapes the gateway's /metrics before and
// after a turn with a tool call and a failing one: the counters moved.
func TestMetricsEndpointAfterATurn(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New()
	t.Cleanup(model.Close)
	port := testenv.FreePort(t)
	home := testenv.NewHome(t, model.URL(), map[string]any{"gateway": map[string]any{"metricsPort": port}})
	_, out, _ := startGateway(t, dev, home.Env(dev.Addr))
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	require.Contains(t, out.String(), url)
	scrape := func() string {
		resp, err := http.Get(url)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		return string(body)
	}
	before := scrape()
	require.Zero(t, metricValue(before, "nanobot_turns_total"))

	r := &rig{dev: dev, model: model, home: home, bus: &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model"})}}
	r.turn(t, "m1", "list", modeltest.ToolCalls(modeltest.Call{ID: "c1", Name: "list_dir", Args: `{"path":"."}`}).Usage(120, 8),
		modeltest.Text("done").Usage(130, 2))
	r.turn(t, "m2", "fail", modeltest.Error(400, "invalid_request", "bad request"))
	_, _, reqs := r.turn(t, "m1", "/new", modeltest.Text("The user listed a folder.").Usage(40, 4))
	require.Len(t, reqs, 1, "/new asked the model for one summary")

	after := scrape()
	require.Equal(t, 3.0, metricValue(after, "nanobot_turns_total"))
	require.Equal(t, 1.0, metricValue(after, "nanobot_turns_total", `stop_reason="completed"`))
	require.Equal(t, 1.0, metricValue(after, "nanobot_turns_total", `stop_reason="`+protocol.StopCommand+`"`))
	require.Equal(t, 1.0, metricValue(after, "nanobot_turns_total", `stop_reason="error"`))
	require.Equal(t, 3.0, metricValue(after, "nanobot_iterations_total"))
	require.Equal(t, 1.0, metricValue(after, "nanobot_tool_calls_total", `tool="list_dir"`, `outcome="ok"`))
	// the turn's two calls and /new's summary call
	require.Equal(t, 290.0, metricValue(after, "nanobot_tokens_total", `kind="prompt"`, `model="test-model"`))
	require.Equal(t, 14.0, metricValue(after, "nanobot_tokens_total", `kind="completion"`))
	require.Equal(t, 3.0, metricValue(after, "nanobot_model_latency_seconds_count", `model="test-model"`))
	require.Equal(t, 1.0, metricValue(after, "nanobot_errors_total", `class="`+protocol.ErrProviderNonRetryable+`"`))
	require.Greater(t, metricValue(after, "temporal_workflow_completed"), 0.0, "the SDK's worker metrics are there too")
	require.Greater(t, metricValue(after, "go_goroutines"), 0.0)
}
