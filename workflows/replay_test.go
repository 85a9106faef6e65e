package workflows

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/protocol"
)

// TestReplayRecordedHistories replays turns recorded from real runs
// (integration tests with NANOBOT_RECORD_HISTORY_DIR=workflows/testdata):
// a change to workflow logic that would break a running turn fails here
// unless it sits behind workflow.GetVersion.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(TurnWorkflow, workflow.RegisterOptions{Name: protocol.TurnWorkflowName})
			r.RegisterWorkflowWithOptions(DreamWorkflow, workflow.RegisterOptions{Name: protocol.DreamWorkflowName})
			r.RegisterWorkflowWithOptions(SubagentWorkflow, workflow.RegisterOptions{Name: protocol.SubagentWorkflowName})
			r.RegisterWorkflowWithOptions(ScheduledTurnWorkflow, workflow.RegisterOptions{Name: protocol.ScheduledTurnWorkflowName})
			r.RegisterWorkflowWithOptions(HeartbeatWorkflow, workflow.RegisterOptions{Name: protocol.HeartbeatWorkflowName})
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, f))
		})
	}
}
