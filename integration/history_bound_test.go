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
	"go.temporal.io/api/workflowservice/v1"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestLongTurnContinuesAsNewUnderTheHistoryBound: a turn whose tool
// results fill its history past the 256 KiB run bound continues as new
// (at least two runs), every run's history stays under 512 KB, the answer
// is the one after the last tool round, and the journal holds each model
// reply and each tool result once. Wide tool rounds (eight results of a
// 512-byte preview each) cross the bound in about 20 iterations instead of 1000.
func TestLongTurnContinuesAsNewUnderTheHistoryBound(t *testing.T) {
	const rounds, width = 36, 8
	r := newRig(t, protocol.Settings{MaxRepeatedToolCalls: 1 << 20})                    // the same read on purpose, past the repeat guard
	big := strings.Repeat("nanobot keeps the history small by passing previews. ", 120) // ~6 KB: its preview is cut to 512 bytes
	require.NoError(t, os.WriteFile(filepath.Join(r.home.Workspace, "big.txt"), []byte(big), 0o644))
	r.model.Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		done := 0
		for _, m := range req.Messages {
			if m.Role == chat.RoleAssistant && len(m.ToolCalls) > 0 {
				done++
			}
		}
		if done >= rounds {
			return modeltest.Text(fmt.Sprintf("read big.txt %d times in %d rounds", done*width, done))
		}
		var calls []modeltest.Call
		for i := range width {
			calls = append(calls, modeltest.Call{ID: fmt.Sprintf("r%d-%d", done+1, i), Name: "read_file", Args: `{"path":"big.txt"}`})
		}
		return modeltest.ToolCalls(calls...)
	})
	r.bus.Settings.MaxIterations = rounds + 5
	const chatID = "long"
	r.send(t, chatID, "read big.txt many times")
	res := r.result(t, chatID)
	require.Equal(t, fmt.Sprintf("read big.txt %d times in %d rounds", rounds*width, rounds), res.ReplyPreview)
	require.Equal(t, protocol.StopCompleted, res.StopReason)

	id := protocol.TurnWorkflowID("cli:" + chatID)
	var sizes []int
	require.Eventually(t, func() bool { // visibility catches up with the last run shortly after it closes
		resp, err := r.dev.Client.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowId = '%s' AND ExecutionStatus != 'Running'", id), PageSize: 100})
		if err != nil || len(resp.GetExecutions()) < 2 {
			return false
		}
		sizes = sizes[:0]
		for _, e := range resp.GetExecutions() {
			sizes = append(sizes, historyBytes(t, r.dev.Client, id, e.GetExecution().GetRunId()))
		}
		return true
	}, time.Minute, 200*time.Millisecond, "the turn never continued as new")
	t.Logf("runs: %d, history bytes per run: %v", len(sizes), sizes)
	crossed := false
	for _, n := range sizes {
		require.Less(t, n, 512_000, "a run's history is over 512 KB: %v", sizes)
		// The server counts the run's size in its stored batches, a little above the events' own sizes.
		crossed = crossed || n > 250<<10
	}
	require.True(t, crossed, "a run grew to the 256 KiB bound before continuing: %v", sizes)

	_, msgs := sessionLines(t, r.home, "cli:"+chatID)
	replies, results := map[string]int{}, map[string]int{}
	for _, m := range msgs {
		switch {
		case m.Role == chat.RoleAssistant:
			replies[m.EntryID]++
		case m.Role == chat.RoleTool:
			results[m.ToolCallID]++
		}
	}
	require.Len(t, results, rounds*width, "one result per tool call")
	for id, n := range results {
		require.Equal(t, 1, n, "tool result %s journaled %d times", id, n)
	}
	require.Len(t, replies, rounds+1, "one reply per model call")
	for id, n := range replies {
		require.Equal(t, 1, n, "model reply %q journaled %d times", id, n)
	}
}
