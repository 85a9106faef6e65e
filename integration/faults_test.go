package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestModelFaultsAtTheWire runs one turn per fault the model endpoint can
// show, through a real worker, and counts the model calls each one costs:
// transient faults are retried (Retry-After honoured) until the answer
// comes; a bad key and an account in arrears are not retried and say why.
func TestModelFaultsAtTheWire(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New()
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	startWorker(t, home.Env(dev.Addr))
	const queue = "faults-replies"
	startRecordingChannel(t, dev.Client, queue)

	cases := []struct {
		name   string
		stream bool
		steps  []modeltest.Step
		calls  int
		reply  string
		waited time.Duration // the least gap before the last call
	}{
		{"429 with Retry-After", false, []modeltest.Step{modeltest.Error(429, "rate_limit_exceeded", "Rate limit reached").RetryAfter("3"), modeltest.Text("after the wait")}, 2, "after the wait", 3 * time.Second},
		{"500 502 503 burst", true, []modeltest.Step{modeltest.Error(500, "", "boom"), modeltest.Error(502, "", "bad gateway"), modeltest.Error(503, "", "overloaded"), modeltest.Text("after the burst")}, 4, "after the burst", 0},
		{"hung request", true, []modeltest.Step{modeltest.Block(), modeltest.Text("after the hang")}, 2, "after the hang", 0},
		{"malformed JSON", false, []modeltest.Step{modeltest.Malformed(), modeltest.Text("after the garbage")}, 2, "after the garbage", 0},
		{"malformed SSE", true, []modeltest.Step{modeltest.Malformed(), modeltest.Text("after the broken stream")}, 2, "after the broken stream", 0},
		{"stream cut midway", true, []modeltest.Step{modeltest.Text("half of an ans").Abort(), modeltest.Text("the whole answer")}, 2, "the whole answer", 0},
		{"401", true, []modeltest.Step{modeltest.Error(401, "invalid_api_key", "Incorrect API key provided")}, 1, "Incorrect API key provided", 0},
		{"402", true, []modeltest.Step{modeltest.Error(402, "", "Payment required")}, 1, protocol.ArrearsText, 0},
		{"429 insufficient_quota", false, []modeltest.Step{modeltest.Error(429, "insufficient_quota", "You exceeded your current quota").Type("insufficient_quota")}, 1, protocol.ArrearsText, 0},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Zero(t, model.Remaining(), "the previous case left steps")
			model.Script(tc.steps...)
			before := model.Count()
			settings := testenv.Settings(protocol.Settings{Model: "test-model", Stream: tc.stream, LLMTimeout: 3 * time.Second})
			bus := &channels.Bus{Client: dev.Client, Settings: settings}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			chat := fmt.Sprintf("fault-%d", i)
			_, err := bus.Publish(ctx, protocol.Inbound{ID: chat, SessionKey: "cli:" + chat, Route: protocol.Route{Channel: "cli", ChatID: chat, Queue: queue}, Content: "hello", SentAt: time.Now()})
			require.NoError(t, err)
			var res protocol.TurnResult
			require.NoError(t, dev.Client.GetWorkflow(ctx, protocol.TurnWorkflowID("cli:"+chat), "").Get(ctx, &res))
			require.Contains(t, res.ReplyPreview, tc.reply)
			require.Equal(t, tc.calls, model.Count()-before, "model calls")
			if tc.waited > 0 {
				reqs := model.Requests()
				gap := reqs[len(reqs)-1].At.Sub(reqs[len(reqs)-2].At)
				require.GreaterOrEqual(t, gap, tc.waited, "the retry came before Retry-After")
			}
			model.Release() // a hung request's connection is gone already; this frees the server side
		})
	}
}
