package cron_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/cron"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/schedules"
	"github.com/nanobot-durable/nanobot/tools"
)

// TestCronToolOnTemporal runs the cron tool against the real dev server:
// jobs are schedules cron/<id> read back with their next run times, a bad
// expression creates nothing, a scheduled turn cannot add jobs, and
// system schedules are protected.
func TestCronToolOnTemporal(t *testing.T) {
	dev := testenv.StartDevServer(t)
	ctx := context.Background()
	svc := &cron.Service{Client: dev.Client}
	tool := tools.NewCronTool(svc, "UTC")
	env := tools.Env{SessionKey: "telegram:42", Turn: "t1", CallID: "c1", Route: protocol.Route{Channel: "telegram", ChatID: "42"}}
	run := func(env tools.Env, args map[string]any) tools.Result { return tool.Run(ctx, env, args) }
	scheduleIDs := func() []string {
		ids, err := schedules.IDs(ctx, dev.Client, "")
		require.NoError(t, err)
		return ids
	}

	bad := run(env, map[string]any{"action": "add", "message": "stand up", "cron_expr": "61 * * * *"})
	require.True(t, bad.IsError)
	require.Contains(t, bad.Text, "Error: invalid cron expression '61 * * * *'")
	require.Empty(t, scheduleIDs(), "a bad expression creates nothing")

	reg := tools.NewRegistry()
	reg.Register(tool)
	scheduled := env
	scheduled.Policy = tools.NewPolicy(protocol.ProfileFor(protocol.CronTurn, false), "")
	refused := reg.Execute(ctx, scheduled, "cron", `{"action":"add","message":"again","every_seconds":5}`)
	require.True(t, refused.IsError)
	require.True(t, strings.HasPrefix(refused.Text, tools.CronInCronText), refused.Text)
	require.Empty(t, scheduleIDs(), "a scheduled turn's policy refuses the add before the tool runs")

	added := run(env, map[string]any{"action": "add", "message": "Drink water", "name": "water", "every_seconds": 3600})
	require.False(t, added.IsError, added.Text)
	id := cron.IDFor("telegram:42", "t1", "c1")
	require.Equal(t, "Created job 'water' (id: "+id+")", added.Text)
	again := run(env, map[string]any{"action": "add", "message": "Drink water", "name": "water", "every_seconds": 3600})
	require.Equal(t, added.Text, again.Text, "a retried add finds its job")
	require.Eventually(t, func() bool { return slices.Equal([]string{"cron/" + id}, scheduleIDs()) }, 30*time.Second, 50*time.Millisecond,
		"Temporal lists the one schedule (its visibility store lags a create)")

	at := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	env.CallID = "c2"
	once := run(env, map[string]any{"action": "add", "message": "Call mum", "at": at.Format("2006-01-02T15:04:05")})
	require.False(t, once.IsError, once.Text)

	jobs, err := svc.List(ctx)
	require.NoError(t, err)
	require.Len(t, jobs, 2)
	byName := map[string]cron.Job{}
	for _, j := range jobs {
		byName[j.Name] = j
	}
	water := byName["water"]
	require.Equal(t, "Drink water", water.Message)
	require.Equal(t, "telegram:42", water.SessionKey)
	require.Equal(t, protocol.Route{Channel: "telegram", ChatID: "42"}, water.Route)
	require.Equal(t, time.Hour, water.Every)
	require.NotEmpty(t, water.Next, "next run times come from Temporal")
	mum := byName["Call mum"]
	require.Equal(t, "at", mum.Kind())
	require.True(t, at.Equal(mum.At), "%v vs %v", at, mum.At)
	require.NotEmpty(t, mum.Next)
	require.True(t, at.Equal(mum.Next[0]), "an at job's next run is its time: %v", mum.Next)

	listed := run(env, map[string]any{"action": "list"})
	require.Contains(t, listed.Text, "- water (id: "+id+", every 1h)")

	require.NoError(t, schedules.Ensure(ctx, dev.Client, schedules.Spec{ID: "dream", Name: "Dream", Kind: "memory", Every: 2 * time.Hour,
		Workflow: protocol.DreamWorkflowName, TaskQueue: protocol.TaskQueue}))
	require.Contains(t, run(env, map[string]any{"action": "remove", "job_id": "dream"}).Text, "Cannot remove job `dream`.")
	require.Equal(t, "Removed job "+id, run(env, map[string]any{"action": "remove", "job_id": id}).Text)
	require.Equal(t, "Job "+id+" not found", run(env, map[string]any{"action": "remove", "job_id": id}).Text)
	require.Equal(t, "Error: job_id is required for remove", run(env, map[string]any{"action": "remove"}).Text)
	require.Equal(t, "Error: tz can only be used with cron_expr or at",
		run(env, map[string]any{"action": "add", "message": "m", "every_seconds": 5, "tz": "UTC"}).Text)
	require.Equal(t, "Error: unknown timezone 'Mars/Olympus'",
		run(env, map[string]any{"action": "add", "message": "m", "cron_expr": "0 9 * * *", "tz": "Mars/Olympus"}).Text)
}

// TestImportNanobotJobs: nanobot's cron/jobs.json becomes schedules once;
// jobs that cannot run are reported, and the file is renamed, not deleted.
func TestImportNanobotJobs(t *testing.T) {
	dev := testenv.StartDevServer(t)
	ctx := context.Background()
	svc := &cron.Service{Client: dev.Client}
	path := filepath.Join(t.TempDir(), "jobs.json")
	store := `{"version": 1, "jobs": [
	  {"id": "a1b2c3d4", "name": "water", "enabled": true,
	   "schedule": {"kind": "every", "everyMs": 1200000},
	   "payload": {"kind": "agent_turn", "message": "Drink water", "sessionKey": "telegram:42", "originChannel": "telegram", "originChatId": "42"}},
	  {"id": "e5f6a7b8", "name": "standup",
	   "schedule": {"kind": "cron", "expr": "0 9 * * 1-5", "tz": "Europe/Paris"},
	   "payload": {"message": "Standup notes", "session_key": "slack:C1"}},
	  {"id": "old", "name": "past", "schedule": {"kind": "at", "atMs": 1000}, "payload": {"message": "too late", "channel": "telegram", "to": "42"}},
	  {"id": "dream", "name": "dream", "schedule": {"kind": "every", "everyMs": 7200000}, "payload": {"kind": "system_event"}},
	  {"id": "off", "name": "off", "enabled": false, "schedule": {"kind": "every", "everyMs": 60000}, "payload": {"message": "x", "channel": "telegram", "to": "1"}}
	]}`
	require.NoError(t, os.WriteFile(path, []byte(store), 0o644))
	n, skipped, err := cron.Import(ctx, svc, path)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Len(t, skipped, 1)
	require.Contains(t, skipped[0], "in the past")
	_, err = os.Stat(path)
	require.True(t, os.IsNotExist(err), "the store is renamed")
	kept, err := os.ReadFile(path + ".imported")
	require.NoError(t, err)
	require.Equal(t, store, string(kept))

	var jobs []cron.Job
	require.Eventually(t, func() bool { // schedules are listed from visibility, which catches up shortly after
		jobs, err = svc.List(ctx)
		return err == nil && len(jobs) == 2
	}, 30*time.Second, 50*time.Millisecond, "imported jobs not listed: %v %v", jobs, err)
	require.Equal(t, "a1b2c3d4", jobs[0].ID)
	require.Equal(t, 20*time.Minute, jobs[0].Every)
	require.Equal(t, protocol.Route{Channel: "telegram", ChatID: "42"}, jobs[0].Route)
	require.Equal(t, "e5f6a7b8", jobs[1].ID)
	require.Equal(t, "cron: 0 9 * * 1-5 (Europe/Paris)", jobs[1].Timing("UTC"))
	require.Equal(t, protocol.Route{Channel: "slack", ChatID: "C1"}, jobs[1].Route)

	n, _, err = cron.Import(ctx, svc, path)
	require.NoError(t, err)
	require.Zero(t, n, "imported once")

	require.NoError(t, os.WriteFile(path, []byte("not json"), 0o644))
	_, _, err = cron.Import(ctx, svc, path)
	require.ErrorContains(t, err, "is not nanobot's cron store")
	_, err = os.Stat(path)
	require.NoError(t, err, "a file it cannot read is left in place")
}

// TestWaitIdle: a fired job waits while its session's turn runs, gives up
// after its bound (the caller then publishes anyway), and goes as soon as
// the turn is gone.
func TestWaitIdle(t *testing.T) {
	dev := testenv.StartDevServer(t)
	ctx := context.Background()
	idle, err := cron.WaitIdle(ctx, dev.Client, protocol.DefaultInstance, "telegram:5", time.Minute, nil)
	require.NoError(t, err)
	require.True(t, idle, "a session that never had a turn is idle")

	// A turn nobody works on stays running: the session is busy.
	run, err := dev.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: protocol.TurnWorkflowID("telegram:5"), TaskQueue: "nobody"}, "TurnWorkflow")
	require.NoError(t, err)
	ticks := 0
	idle, err = cron.WaitIdle(ctx, dev.Client, protocol.DefaultInstance, "telegram:5", 600*time.Millisecond, func() { ticks++ })
	require.NoError(t, err)
	require.False(t, idle, "still busy when the bound ran out")
	require.Positive(t, ticks, "the wait heartbeats")

	done := make(chan bool, 1)
	go func() {
		idle, _ := cron.WaitIdle(ctx, dev.Client, protocol.DefaultInstance, "telegram:5", time.Minute, nil)
		done <- idle
	}()
	require.NoError(t, dev.Client.TerminateWorkflow(ctx, run.GetID(), run.GetRunID(), "turn over"))
	select {
	case idle = <-done:
		require.True(t, idle, "the job goes once the turn ended")
	case <-time.After(30 * time.Second):
		t.Fatal("WaitIdle did not notice the turn ended")
	}
}
