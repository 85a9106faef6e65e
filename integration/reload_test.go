package integration

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/memory"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/schedules"
	"github.com/nanobot-durable/nanobot/workers"
)

// TestConfigReloadReachesTheNextFirings: a running gateway picks up a
// changed config.json. gateway.heartbeat.intervalS reaches the heartbeat's
// schedule, which then fires at the new interval, and a new
// dream.modelOverride is the model of the next Dream run: schedules carry
// no settings, each firing reads the config of its time.
func TestConfigReloadReachesTheNextFirings(t *testing.T) {
	dev := testenv.StartDevServer(t)
	var mu sync.Mutex
	var models []string
	model := modeltest.New().Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		mu.Lock()
		defer mu.Unlock()
		models = append(models, req.Model)
		return modeltest.Text("No changes.")
	})
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"web": map[string]any{"enabled": false}}})
	// writeConfig sets the heartbeat's interval and Dream's model in config.json.
	writeConfig := func(intervalS int, dreamModel string) {
		t.Helper()
		var current map[string]any
		data, err := os.ReadFile(home.ConfigPath)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &current))
		defaults := current["agents"].(map[string]any)["defaults"].(map[string]any)
		defaults["dream"] = map[string]any{"enabled": true, "intervalH": 2, "modelOverride": dreamModel}
		current["gateway"] = map[string]any{"heartbeat": map[string]any{"enabled": true, "intervalS": intervalS}}
		data, err = json.MarshalIndent(current, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(home.ConfigPath, data, 0o600))
		later := time.Now().Add(time.Minute) // the watcher compares modification times
		require.NoError(t, os.Chtimes(home.ConfigPath, later, later))
	}
	writeConfig(3600, "dream-model-a")
	_, out, errOut := startNanobot(t, home.Env(dev.Addr), "gateway")
	ctx := context.Background()
	every := func(id string) time.Duration {
		d, err := schedules.Describe(ctx, dev.Client, id)
		if err != nil || len(d.Schedule.Spec.Intervals) == 0 {
			return 0
		}
		return d.Schedule.Spec.Intervals[0].Every
	}
	require.Eventually(t, func() bool { return every(protocol.HeartbeatScheduleID) == time.Hour }, time.Minute, 50*time.Millisecond,
		"the gateway made the heartbeat schedule from intervalS 3600:\n%s\n%s", out, errOut)

	dreamWith := func(entry string) string {
		t.Helper()
		_, err := memory.Append(home.Workspace, memory.Entry{Content: entry, SessionKey: "cli:direct", ID: entry})
		require.NoError(t, err)
		mu.Lock()
		before := len(models)
		mu.Unlock()
		require.NoError(t, schedules.Trigger(ctx, dev.Client, workers.DreamScheduleID))
		var got string
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			if len(models) > before {
				got = models[before]
			}
			return got != ""
		}, time.Minute, 50*time.Millisecond, "Dream fired and asked its model:\n%s", errOut)
		return got
	}
	require.Equal(t, "dream-model-a", dreamWith("the user likes green tea"))

	writeConfig(2, "dream-model-b")
	require.Eventually(t, func() bool { return every(protocol.HeartbeatScheduleID) == 2*time.Second }, time.Minute, 50*time.Millisecond,
		"the reload reached the heartbeat schedule:\n%s", out)
	// The reload line follows every upkeep schedule's update, the heartbeat's is not the last.
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "config reloaded") }, time.Minute, 50*time.Millisecond,
		"the gateway says it reloaded:\n%s", out)
	fired := func() int {
		d, err := schedules.Describe(ctx, dev.Client, protocol.HeartbeatScheduleID)
		require.NoError(t, err)
		return int(d.Info.NumActions)
	}
	start := fired()
	require.Eventually(t, func() bool { return fired() >= start+2 }, time.Minute, 100*time.Millisecond,
		"the heartbeat fires at the new interval")
	require.Equal(t, "dream-model-b", dreamWith("the user moved to Lyon"), "the next Dream run reads the reloaded model")
	require.False(t, strings.Contains(errOut.String(), "upkeep schedules after a config reload"), errOut.String())
}
