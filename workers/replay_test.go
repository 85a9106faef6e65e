package workers

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/nanobot-durable/nanobot/activities"
)

// TestReplayRecordedHistories replays runs recorded from the integration
// tests (NANOBOT_RECORD_HISTORY_DIR=$PWD/workflows/testdata) on the
// workflows as the features table registers them: a change to workflow
// logic that would break a run in flight fails here (README, "Changing
// workflow code").
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "workflows", "testdata", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	features := Features(activities.New(activities.Deps{}))
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			RegisterWorkflows(r, features)
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, f))
		})
	}
}
