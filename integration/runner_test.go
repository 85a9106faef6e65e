package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/nanobot-durable/nanobot/activities"
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// rig is a dev server, a scripted model and one `nanobot worker` process.
type rig struct {
	dev   *testenv.DevServer
	model *modeltest.Server
	home  *testenv.Home
	bus   *channels.Bus
}

func newRig(t *testing.T, settings protocol.Settings) *rig {
	t.Helper()
	r := &rig{dev: testenv.StartDevServer(t), model: modeltest.New()}
	t.Cleanup(r.model.Close)
	r.home = testenv.NewHome(t, r.model.URL(), nil)
	startWorker(t, r.home.Env(r.dev.Addr))
	settings.Model = "test-model"
	r.bus = &channels.Bus{Client: r.dev.Client, Settings: testenv.Settings(settings)}
	return r
}

func (r *rig) send(t *testing.T, chatID, text string) {
	t.Helper()
	_, err := r.bus.Publish(context.Background(), protocol.Inbound{ID: fmt.Sprintf("%s-%d", chatID, time.Now().UnixNano()), SessionKey: "cli:" + chatID, Route: protocol.Route{Channel: "cli", ChatID: chatID}, Content: text, SentAt: time.Now()})
	require.NoError(t, err)
}

// result waits for the session's turn (following continue-as-new) to end.
func (r *rig) result(t *testing.T, chatID string) protocol.TurnResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var res protocol.TurnResult
	require.NoError(t, r.dev.Client.GetWorkflow(ctx, protocol.TurnWorkflowID("cli:"+chatID), "").Get(ctx, &res))
	return res
}

func (r *rig) turn(t *testing.T, chatID, text string, steps ...modeltest.Step) (protocol.TurnResult, []chat.Message, []modeltest.RecordedRequest) {
	t.Helper()
	before := r.model.Count()
	r.model.Script(steps...)
	r.send(t, chatID, text)
	res := r.result(t, chatID)
	_, msgs := sessionLines(t, r.home, "cli:"+chatID)
	return res, msgs, r.model.Requests()[before:]
}

func lastAssistant(msgs []chat.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == chat.RoleAssistant {
			return msgs[i].Content
		}
	}
	return ""
}

func lastUserText(req modeltest.RecordedRequest) string {
	return req.Messages[len(req.Messages)-1].Content
}

// TestRecoveryPathsAtTheWire drives nanobot's recovery rules through the
// real worker against a scripted OpenAI-compatible server.
func TestRecoveryPathsAtTheWire(t *testing.T) {
	r := newRig(t, protocol.Settings{})

	t.Run("empty replies retry, the second without tools", func(t *testing.T) {
		res, msgs, reqs := r.turn(t, "empty", "hi", modeltest.Text(""), modeltest.Text(""), modeltest.Text("final answer"))
		require.Len(t, reqs, 3)
		require.NotEmpty(t, reqs[1].Tools)
		require.Empty(t, reqs[2].Tools)
		require.Equal(t, activities.EmptyRetryPrompt, lastUserText(reqs[2]))
		require.Equal(t, protocol.StopCompleted, res.StopReason)
		require.Equal(t, "final answer", lastAssistant(msgs))
	})
	t.Run("still empty ends with nanobot's text", func(t *testing.T) {
		res, _, reqs := r.turn(t, "empty3", "hi", modeltest.Text(""), modeltest.Text(""), modeltest.Text(""))
		require.Len(t, reqs, 3)
		require.Equal(t, protocol.StopEmptyFinal, res.StopReason)
		require.Equal(t, protocol.EmptyFinalText, res.ReplyPreview)
	})
	t.Run("think-only reply counts as empty", func(t *testing.T) {
		res, _, reqs := r.turn(t, "think", "hi", modeltest.Text("<think>pondering</think>"), modeltest.Text("Recovered answer"))
		require.Len(t, reqs, 2)
		require.Equal(t, "Recovered answer", res.ReplyPreview)
	})
	t.Run("length continues and joins the segments", func(t *testing.T) {
		res, msgs, reqs := r.turn(t, "length", "write",
			modeltest.Text("first ").Finish("length"), modeltest.Text("second ").Finish("length"), modeltest.Text("third"))
		require.Len(t, reqs, 3)
		require.Contains(t, lastUserText(reqs[1]), "<already_delivered_tail>first </already_delivered_tail>")
		require.Equal(t, protocol.StopCompleted, res.StopReason)
		require.Equal(t, "first second third", lastAssistant(msgs))
		require.Len(t, msgs, 2, "one joined reply in the session")
	})
	t.Run("max iterations finalizes without tools", func(t *testing.T) {
		call := func(id string) modeltest.Step {
			return modeltest.ToolCalls(modeltest.Call{ID: id, Name: "list_dir", Args: `{"path":"."}`})
		}
		r.bus.Settings.MaxIterations = 2
		defer func() { r.bus.Settings.MaxIterations = testenv.Settings(protocol.Settings{}).MaxIterations }()
		res, msgs, reqs := r.turn(t, "maxiter", "loop", call("a"), call("b"), call("c"))
		require.Len(t, reqs, 3)
		require.Empty(t, reqs[2].Tools)
		require.True(t, strings.HasPrefix(lastUserText(reqs[2]), "The tool-call budget for this turn is exhausted"))
		require.Equal(t, protocol.StopMaxIterations, res.StopReason)
		require.Contains(t, lastAssistant(msgs), "maximum number of tool call iterations (2)")
	})
	t.Run("unknown tool suggests the right one", func(t *testing.T) {
		_, msgs, _ := r.turn(t, "unknown", "read it",
			modeltest.ToolCalls(modeltest.Call{ID: "u1", Name: "readFile", Args: `{"path":"x"}`}), modeltest.Text("ok"))
		require.Contains(t, msgs[2].Content, "Error: Tool 'readFile' not found. Did you mean 'read_file'?")
		require.Contains(t, msgs[2].Content, "[Analyze the error above and try a different approach.]")
	})
	t.Run("arrears gives the top-up text", func(t *testing.T) {
		res, msgs, reqs := r.turn(t, "arrears", "hi", modeltest.Error(402, "insufficient_quota", "You exceeded your current quota"))
		require.Len(t, reqs, 1, "arrears is not retried")
		require.Equal(t, protocol.StopError, res.StopReason)
		require.Equal(t, protocol.ArrearsText, res.ReplyPreview)
		require.Equal(t, activities.ModelErrorPlaceholder, lastAssistant(msgs))
	})
	t.Run("429 is retried after Retry-After", func(t *testing.T) {
		res, _, reqs := r.turn(t, "ratelimit", "hi", modeltest.Error(429, "rate_limit_exceeded", "slow down").RetryAfter("1"), modeltest.Text("after the wait"))
		require.Len(t, reqs, 2)
		require.Equal(t, "after the wait", res.ReplyPreview)
	})
	t.Run("a new turn closes an interrupted one", func(t *testing.T) {
		// A turn terminated mid-model-call leaves the user message unanswered.
		r.model.Script(modeltest.Block())
		r.send(t, "interrupted", "will be cut")
		require.Eventually(t, func() bool { return r.model.Waiting() == 1 }, time.Minute, 20*time.Millisecond)
		require.NoError(t, r.dev.Client.TerminateWorkflow(context.Background(), "turn/cli:interrupted", "", "test"))
		_, msgs, _ := r.turn(t, "interrupted", "next", modeltest.Text("fresh answer"))
		require.Equal(t, []string{"will be cut", activities.InterruptedReply, "next", "fresh answer"},
			[]string{msgs[0].Content, msgs[1].Content, msgs[2].Content, msgs[3].Content})
	})
}

// TestInjectionBurstDuringLongTool sends 10 messages while a tool runs:
// they are injected three at a time at the drain points and none is lost.
func TestInjectionBurstDuringLongTool(t *testing.T) {
	r := newRig(t, protocol.Settings{})
	r.model.Script(
		modeltest.ToolCalls(modeltest.Call{ID: "slow", Name: "exec", Args: `{"command":"sleep 3"}`}),
		modeltest.Text("answer A"), modeltest.Text("answer B"), modeltest.Text("answer C"), modeltest.Text("answer D"),
	)
	r.send(t, "burst", "start a long job")
	require.Eventually(t, func() bool { return r.model.Count() == 1 }, time.Minute, 20*time.Millisecond)
	for i := 1; i <= 10; i++ {
		r.send(t, "burst", fmt.Sprintf("msg %d", i))
	}
	res := r.result(t, "burst")
	require.Equal(t, protocol.StopCompleted, res.StopReason)
	require.Len(t, res.MessageIDs, 11, "every message was answered in this turn")
	_, msgs := sessionLines(t, r.home, "cli:burst")
	var injected []string
	seen := map[string]int{}
	for _, m := range msgs {
		if m.Role == chat.RoleUser && strings.HasPrefix(m.EntryID, "inject-") {
			injected = append(injected, m.Content)
			parts := strings.Split(m.Content, "\n\n")
			require.LessOrEqual(t, len(parts), 3, "at most 3 messages per drain")
			for _, p := range parts {
				seen[p]++
			}
		}
	}
	require.Len(t, injected, 4, "10 messages in drains of 3, 3, 3, 1")
	for i := 1; i <= 10; i++ {
		require.Equal(t, 1, seen[fmt.Sprintf("msg %d", i)], "msg %d injected exactly once", i)
	}
	require.Equal(t, 5, r.model.Count())
}

// TestStopDuringToolCall cancels a turn while exec runs: the command's
// process group dies, the turn is saved as interrupted, the next message works.
func TestStopDuringToolCall(t *testing.T) {
	r := newRig(t, protocol.Settings{})
	// Found by what it runs, not by its $$: in the sandbox that is a pid of the sandbox's own namespace.
	const marker = "sleep 60.0731"
	r.model.Script(modeltest.ToolCalls(modeltest.Call{ID: "long", Name: "exec", Args: `{"command":"` + marker + `"}`}))
	r.send(t, "stop", "run something long")
	require.Eventually(t, func() bool { return len(testenv.ProcessesRunning(t, marker)) > 0 }, time.Minute, 20*time.Millisecond)

	reply, err := r.bus.Publish(context.Background(), protocol.Inbound{ID: "stop-1", SessionKey: "cli:stop", Route: protocol.Route{Channel: "cli", ChatID: "stop"}, Content: "/stop"})
	require.NoError(t, err)
	require.Equal(t, "Stopped 1 task(s).", reply)
	require.Eventually(t, func() bool { return len(testenv.ProcessesRunning(t, marker)) == 0 }, 30*time.Second, 50*time.Millisecond,
		"the command was killed: %v", testenv.ProcessesRunning(t, marker))
	require.Eventually(t, func() bool {
		_, msgs := sessionLines(t, r.home, "cli:stop")
		return len(msgs) == 4
	}, 30*time.Second, 50*time.Millisecond)
	_, msgs := sessionLines(t, r.home, "cli:stop")
	require.Equal(t, activities.InterruptedTool, msgs[2].Content)
	require.Equal(t, activities.InterruptedReply, msgs[3].Content)
	desc, err := r.dev.Client.DescribeWorkflowExecution(context.Background(), "turn/cli:stop", "")
	require.NoError(t, err)
	stopped := desc.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	require.Error(t, r.dev.Client.GetWorkflow(context.Background(), "turn/cli:stop", stopped).Get(context.Background(), nil), "the run ends cancelled")
	testenv.RecordHistory(t, r.dev.Client, "turn/cli:stop", stopped, "turn_stopped")

	reply, err = r.bus.Publish(context.Background(), protocol.Inbound{ID: "stop-2", SessionKey: "cli:stop", Route: protocol.Route{Channel: "cli", ChatID: "stop"}, Content: "/stop"})
	require.NoError(t, err)
	require.Empty(t, reply, "nothing runs: the turn itself answers")
	res := r.result(t, "stop")
	require.Equal(t, "No active task to stop.", res.ReplyPreview)
}

// TestHistoryStaysSmall runs long turns over a 40 KB context and checks the
// workflow history grows with the number of steps, not with the context.
func TestHistoryStaysSmall(t *testing.T) {
	r := newRig(t, protocol.Settings{MaxIterations: 100, MaxRepeatedToolCalls: 1 << 20}) // long turns of one call, past the repeat guard
	require.NoError(t, os.WriteFile(filepath.Join(r.home.Workspace, "big.txt"), []byte(strings.Repeat("forty kilobytes of context.\n", 1463)), 0o644))
	sizes := map[int]int{}
	for _, n := range []int{30, 60} {
		steps := []modeltest.Step{modeltest.ToolCalls(modeltest.Call{ID: "big", Name: "read_file", Args: `{"path":"big.txt"}`})}
		for i := 1; i < n; i++ {
			steps = append(steps, modeltest.ToolCalls(modeltest.Call{ID: fmt.Sprintf("c%d", i), Name: "list_dir", Args: `{"path":"."}`}))
		}
		steps = append(steps, modeltest.Text("done"))
		chatID := fmt.Sprintf("long%d", n)
		res, _, reqs := r.turn(t, chatID, "work a long time", steps...)
		require.Equal(t, n+1, res.Iterations)
		require.Greater(t, len(reqs[len(reqs)-1].Body), 40_000, "each model call carries the 40 KB context")
		total := 0
		for _, ev := range testenv.History(t, r.dev.Client, "turn/cli:"+chatID, "").Events {
			total += proto.Size(ev)
		}
		sizes[n] = total
	}
	perIteration := (sizes[60] - sizes[30]) / 30
	t.Logf("workflow history: %d bytes for 30 iterations, %d bytes for 60; %d bytes per iteration", sizes[30], sizes[60], perIteration)
	require.Less(t, sizes[60], 1<<20, "history under 1 MB")
	require.Less(t, perIteration, 4096, "an iteration adds a few KB, not the context")
	require.InDelta(t, float64(sizes[30])/30, float64(perIteration), float64(perIteration), "growth is linear")
}

// TestModelCallsCappedAcrossSessions: five sessions at once, one worker;
// its model-call slots (NANOBOT_MAX_CONCURRENT_REQUESTS=3 by default) cap
// the model calls in flight on both queues: three run on the turn's queue,
// the two that found no free slot are asked again on the LLM queue and wait
// there, and every session still gets its answer.
func TestModelCallsCappedAcrossSessions(t *testing.T) {
	r := newRig(t, protocol.Settings{})
	steps := make([]modeltest.Step, 5)
	for i := range steps {
		steps[i] = modeltest.Block().Text(fmt.Sprintf("answer %d", i))
	}
	r.model.Script(steps...)
	for i := 0; i < 5; i++ {
		r.send(t, fmt.Sprintf("par%d", i), "hello")
	}
	require.Eventually(t, func() bool { return r.model.Waiting() == 3 }, time.Minute, 20*time.Millisecond)
	time.Sleep(500 * time.Millisecond)
	require.Equal(t, 3, r.model.Waiting(), "no more than 3 model calls at once")
	// Release frees every held call; the remaining two then take the free slots.
	r.model.Release()
	require.Eventually(t, func() bool { return r.model.Count() == 5 && r.model.Waiting() == 2 }, time.Minute, 20*time.Millisecond)
	r.model.Release()
	queued := 0
	for i := 0; i < 5; i++ {
		chatID := fmt.Sprintf("par%d", i)
		res := r.result(t, chatID)
		require.Equal(t, protocol.StopCompleted, res.StopReason)
		queues := modelCallQueues(t, r.dev, "turn/cli:"+chatID)
		if len(queues) == 2 {
			require.Equal(t, []string{protocol.TaskQueue, protocol.LLMTaskQueue}, queues, "a busy call is asked again on the LLM queue")
			if queued++; queued == 1 {
				testenv.RecordHistory(t, r.dev.Client, "turn/cli:"+chatID, "", "model_call_queued")
			}
			continue
		}
		require.Equal(t, []string{protocol.TaskQueue}, queues, "a call with a free slot runs on the turn's queue")
	}
	require.Equal(t, 2, queued, "the two calls past the cap went to the LLM queue")
}

// modelCallQueues lists the task queue of each LLMCall a run scheduled.
func modelCallQueues(t *testing.T, dev *testenv.DevServer, workflowID string) []string {
	var queues []string
	for _, ev := range testenv.History(t, dev.Client, workflowID, "").Events {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == protocol.ActivityLLMCall {
			queues = append(queues, a.GetTaskQueue().GetName())
		}
	}
	return queues
}
