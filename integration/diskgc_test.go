package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/media"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/schedules"
	"github.com/nanobot-durable/nanobot/workers"
)

// TestDiskGCScheduleSweepsTheWorkspaceHost: the gateway's disk-gc schedule,
// fired now, runs the retention rules on the worker holding the workspace:
// an old download goes, a new one stays.
func TestDiskGCScheduleSweepsTheWorkspaceHost(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := newMemoryModel(t)
	home := testenv.NewHome(t, model.URL(), nil)
	startWorker(t, home.Env(dev.Addr, "TMPDIR="+t.TempDir()))
	old, fresh := filepath.Join(media.Dir(home.Workspace), "telegram", "old.jpg"), filepath.Join(media.Dir(home.Workspace), "telegram", "new.jpg")
	for _, p := range []string{old, fresh} {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("jpeg"), 0o600))
	}
	long := time.Now().Add(-40 * 24 * time.Hour)
	require.NoError(t, os.Chtimes(old, long, long))

	ctx := context.Background()
	cfg, _, err := config.Load(home.ConfigPath)
	require.NoError(t, err)
	require.NoError(t, workers.EnsureUpkeep(ctx, dev.Client, cfg))
	desc, err := schedules.Describe(ctx, dev.Client, workers.DiskGCScheduleID)
	require.NoError(t, err)
	require.Equal(t, 24*time.Hour, desc.Schedule.Spec.Intervals[0].Every, "a sweep a day by default")
	require.NoError(t, schedules.Trigger(ctx, dev.Client, workers.DiskGCScheduleID))

	require.Eventually(t, func() bool {
		_, err := os.Stat(old)
		return os.IsNotExist(err)
	}, time.Minute, 100*time.Millisecond, "the 40-day-old download is removed (mediaDays 30)")
	require.FileExists(t, fresh)
	require.Eventually(t, func() bool {
		resp, err := dev.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: "WorkflowType = '" + protocol.DiskGCWorkflowName + "' AND ExecutionStatus = 'Completed'"})
		return err == nil && len(resp.Executions) == 1
	}, 30*time.Second, 100*time.Millisecond, "one completed disk-gc run")
}

// TestEmbeddedTemporalKeepsItsRetention: temporal-dev registers the
// namespace with --namespace-retention, and a restart with another value
// changes it on the database it reuses.
func TestEmbeddedTemporalKeepsItsRetention(t *testing.T) {
	db := filepath.Join(t.TempDir(), "temporal.db")
	port := testenv.FreePort(t)
	retention := func(dev *testenv.DevServer) time.Duration {
		resp, err := dev.Client.WorkflowService().DescribeNamespace(context.Background(),
			&workflowservice.DescribeNamespaceRequest{Namespace: "default"})
		require.NoError(t, err)
		return resp.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration()
	}
	dev := testenv.StartDevServerOn(t, port, "--db-filename", db, "--namespace-retention", "72h")
	require.Equal(t, 72*time.Hour, retention(dev), "pre-registered with it")
	dev.Stop()
	// testenv deems the server up when it answers health checks, before its bootstrap updates the namespace.
	dev = testenv.StartDevServerOn(t, port, "--db-filename", db, "--namespace-retention", "120h")
	require.Eventually(t, func() bool { return retention(dev) == 120*time.Hour }, 30*time.Second, 100*time.Millisecond,
		"a reused database takes the new retention")
}
