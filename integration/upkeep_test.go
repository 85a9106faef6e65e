package integration

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/memory"
	"github.com/nanobot-durable/nanobot/memory/gitstore"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/schedules"
	"github.com/nanobot-durable/nanobot/workers"
)

// TestUpkeepSchedulesFireOnTheDevServer: the gateway's schedules are made
// from the config, then sped up to seconds; idle compaction summarizes an
// idle session down to its last 8 messages and skips one whose turn runs;
// Dream absorbs the summary into MEMORY.md and commits it.
func TestUpkeepSchedulesFireOnTheDevServer(t *testing.T) {
	r := newMemoryRig(t, 200000, 1024)
	ctx := context.Background()

	// What the gateway registers from config.json.
	cfg, _, err := config.Load(r.home.ConfigPath)
	require.NoError(t, err)
	require.NoError(t, workers.EnsureUpkeep(ctx, r.dev.Client, cfg))
	desc, err := schedules.Describe(ctx, r.dev.Client, workers.DreamScheduleID)
	require.NoError(t, err)
	require.Equal(t, 2*time.Hour, desc.Schedule.Spec.Intervals[0].Every, "dream.intervalH 2")
	require.Equal(t, enumspb.SCHEDULE_OVERLAP_POLICY_SKIP, desc.Schedule.Policy.Overlap)
	var name string
	require.NoError(t, json.Unmarshal(desc.Memo.Fields["name"].Data, &name))
	require.Equal(t, "Dream", name)
	desc, err = schedules.Describe(ctx, r.dev.Client, workers.IdleCompactScheduleID)
	require.NoError(t, err)
	require.Equal(t, time.Minute, desc.Schedule.Spec.Intervals[0].Every, "idleCompactCheckIntervalSeconds 60")
	cfg.Agents.Defaults.Dream.Enabled = false
	require.NoError(t, workers.EnsureUpkeep(ctx, r.dev.Client, cfg))
	_, err = schedules.Describe(ctx, r.dev.Client, workers.DreamScheduleID)
	var notFound *serviceerror.NotFound
	require.ErrorAs(t, err, &notFound, "a disabled Dream has no schedule")

	for i := 0; i < 6; i++ {
		r.say(t, "idle", studyNote(i))
		r.say(t, "busy", studyNote(i))
	}
	r.model.Script(modeltest.Block().Text("finally"))
	_, err = r.bus.Publish(ctx, protocol.Inbound{ID: "busy-blocked", SessionKey: "cli:busy", Route: protocol.Route{Channel: "cli", ChatID: "busy"}, Content: "a slow one", SentAt: time.Now()})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return r.model.Waiting() == 1 }, 30*time.Second, 20*time.Millisecond)

	// Both sessions look idle for 20 minutes (idleCompactAfterMinutes is 15),
	// and the schedules fire every few seconds: the same schedules, updated.
	for _, key := range []string{"cli:idle", "cli:busy"} {
		past := time.Now().Add(-20 * time.Minute)
		require.NoError(t, os.Chtimes(sessionPath(t, r.home, key), past, past))
	}
	require.NoError(t, schedules.Ensure(ctx, r.dev.Client, schedules.Spec{ID: workers.IdleCompactScheduleID, Every: 2 * time.Second,
		Workflow: protocol.IdleCompactWorkflowName, TaskQueue: protocol.TaskQueue, Args: []any{protocol.IdleCompactInput{}}}))
	t.Cleanup(func() { _ = schedules.Delete(context.Background(), r.dev.Client, workers.IdleCompactScheduleID) })

	require.Eventually(t, func() bool {
		meta, msgs := sessionLines(t, r.home, "cli:idle")
		lc, _ := meta["last_consolidated"].(float64)
		return int(lc) == len(msgs)-protocol.IdleKeepMessages
	}, time.Minute, 100*time.Millisecond, "the idle session is compacted to its last 8 messages")
	meta, _ := sessionLines(t, r.home, "cli:idle")
	require.Contains(t, meta["metadata"].(map[string]any)["_last_summary"].(map[string]any)["text"], "Summary ")

	// A later run reports the busy session skipped, and leaves it alone.
	require.Eventually(t, func() bool { return idleRunSkipped(t, r, "cli:busy") }, time.Minute, 200*time.Millisecond)
	meta, _ = sessionLines(t, r.home, "cli:busy")
	require.Zero(t, meta["last_consolidated"])
	r.model.Release()

	require.NoError(t, schedules.Ensure(ctx, r.dev.Client, schedules.Spec{ID: workers.DreamScheduleID, Every: 3 * time.Second,
		Workflow: protocol.DreamWorkflowName, TaskQueue: protocol.TaskQueue, Args: []any{protocol.DreamInput{}}}))
	t.Cleanup(func() { _ = schedules.Delete(context.Background(), r.dev.Client, workers.DreamScheduleID) })
	require.Eventually(t, func() bool {
		data, _ := os.ReadFile(memory.MemoryPath(r.home.Workspace))
		return string(data) == dreamedMemory
	}, time.Minute, 100*time.Millisecond, "Dream fired and rewrote MEMORY.md")
	require.Eventually(t, func() bool {
		repo, err := gitstore.Open(r.home.Workspace)
		require.NoError(t, err)
		log, err := repo.Log(1)
		require.NoError(t, err)
		return len(log) == 1 && log[0].Message == "dream: periodic memory consolidation"
	}, 30*time.Second, 100*time.Millisecond)
	cursor, err := memory.ReadCursor(r.home.Workspace)
	require.NoError(t, err)
	require.Positive(t, cursor)
}

// idleRunSkipped reports whether a finished idle-compact run skipped key.
func idleRunSkipped(t *testing.T, r *memoryRig, key string) bool {
	desc, err := schedules.Describe(context.Background(), r.dev.Client, workers.IdleCompactScheduleID)
	require.NoError(t, err)
	for _, a := range desc.Info.RecentActions {
		if a.StartWorkflowResult == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var res protocol.IdleCompactResult
		err := r.dev.Client.GetWorkflow(ctx, a.StartWorkflowResult.WorkflowID, a.StartWorkflowResult.FirstExecutionRunID).Get(ctx, &res)
		cancel()
		if err == nil && slices.Contains(res.Skipped, key) {
			return true
		}
	}
	return false
}
