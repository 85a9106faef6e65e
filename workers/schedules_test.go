package workers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/schedules"
)

func TestUpkeepSchedulesFollowTheConfig(t *testing.T) {
	cfg := config.Default()
	on, off := UpkeepSchedules(cfg)
	require.Empty(t, off)
	require.Len(t, on, 4)
	require.Equal(t, DreamScheduleID, on[0].ID)
	require.Equal(t, 2*time.Hour, on[0].Every)
	require.Equal(t, IdleCompactScheduleID, on[1].ID)
	require.Equal(t, time.Minute, on[1].Every)
	require.Equal(t, protocol.IdleCompactInput{}, on[1].Args[0], "idle compaction reads its settings when it fires")
	hb := on[2]
	require.Equal(t, protocol.HeartbeatScheduleID, hb.ID)
	require.Equal(t, 1800*time.Second, hb.Every, "gateway.heartbeat.intervalS 1800")
	require.Equal(t, protocol.HeartbeatWorkflowName, hb.Workflow)
	require.Equal(t, map[string]any{"session": protocol.HeartbeatSessionKey}, hb.Memo)
	require.Equal(t, schedules.KindHeartbeat, hb.Kind)
	require.Equal(t, []any{protocol.HeartbeatInput{}}, hb.Args, "the heartbeat reads its settings when it fires")
	gc := on[3]
	require.Equal(t, DiskGCScheduleID, gc.ID)
	require.Equal(t, 24*time.Hour, gc.Every, "retention.intervalH defaults to a day")
	require.Equal(t, protocol.DiskGCWorkflowName, gc.Workflow)
	require.Equal(t, []any{protocol.DiskGCInput{}}, gc.Args, "gc reads the retention settings when it fires")
	require.Equal(t, schedules.KindDisk, gc.Kind)

	cfg.Agents.Defaults.Dream = config.Dream{Enabled: true, IntervalH: 2, Cron: "0 3 * * *", ModelOverride: "cheap-model"}
	cfg.Agents.Defaults.Timezone = "Asia/Shanghai"
	cfg.Agents.Defaults.IdleCompactAfterMinutes = 0
	cfg.Gateway.Heartbeat.IntervalS = 60
	on, off = UpkeepSchedules(cfg)
	require.Equal(t, []string{IdleCompactScheduleID}, off, "0 minutes turns idle compaction off")
	require.Len(t, on, 3)
	require.Equal(t, time.Minute, on[1].Every, "the heartbeat follows intervalS")
	require.Equal(t, "0 3 * * *", on[0].Cron, "dream.cron wins over intervalH")
	require.Zero(t, on[0].Every)
	require.Equal(t, "Asia/Shanghai", on[0].TimeZone)
	require.Equal(t, []any{protocol.DreamInput{}}, on[0].Args, "Dream reads its model when it fires")

	cfg.Agents.Defaults.Dream.Enabled = false
	cfg.Gateway.Heartbeat.Enabled = false
	cfg.Retention.IntervalH = new(0)
	_, off = UpkeepSchedules(cfg)
	require.Equal(t, []string{DreamScheduleID, IdleCompactScheduleID, protocol.HeartbeatScheduleID, DiskGCScheduleID}, off)
}
