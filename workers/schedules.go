package workers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/schedules"
)

// Schedule IDs of memory upkeep.
const (
	DreamScheduleID       = "dream"
	IdleCompactScheduleID = "idle-compact"
)

// UpkeepSchedules are the schedules the config asks for (Dream, idle
// compaction, the heartbeat); the IDs it leaves out (disabled) are returned in off.
func UpkeepSchedules(cfg *config.Config) (on []schedules.Spec, off []string) {
	d := cfg.Agents.Defaults
	settings := Settings(cfg)
	if dm := d.Dream; dm.Enabled && (dm.Cron != "" || dm.IntervalH > 0) {
		s := settings
		if dm.ModelOverride != "" {
			s.Model = dm.ModelOverride
		}
		spec := schedules.Spec{ID: DreamScheduleID, Name: "Dream", Kind: "memory", Cron: dm.Cron, TimeZone: d.Timezone,
			Workflow: protocol.DreamWorkflowName, Args: []any{protocol.DreamInput{Settings: s}}, TaskQueue: protocol.TaskQueue}
		if dm.Cron == "" {
			spec.Every = time.Duration(dm.IntervalH) * time.Hour
		}
		on = append(on, spec)
	} else {
		off = append(off, DreamScheduleID)
	}
	if d.IdleCompactAfterMinutes > 0 {
		every := time.Duration(d.IdleCompactCheckIntervalSeconds) * time.Second
		if every <= 0 {
			every = time.Minute
		}
		on = append(on, schedules.Spec{ID: IdleCompactScheduleID, Name: "Idle compaction", Kind: "memory", Every: every,
			Workflow: protocol.IdleCompactWorkflowName, TaskQueue: protocol.TaskQueue,
			Args: []any{protocol.IdleCompactInput{IdleAfter: time.Duration(d.IdleCompactAfterMinutes) * time.Minute, Settings: settings}}})
	} else {
		off = append(off, IdleCompactScheduleID)
	}
	if hb := cfg.Gateway.Heartbeat; hb.Enabled && hb.IntervalS > 0 {
		every := time.Duration(hb.IntervalS) * time.Second
		on = append(on, schedules.Spec{ID: protocol.HeartbeatScheduleID, Name: "Heartbeat", Kind: "heartbeat", Every: every,
			Memo: map[string]any{"session": protocol.HeartbeatSessionKey}, Workflow: protocol.HeartbeatWorkflowName, TaskQueue: protocol.TaskQueue,
			Args: []any{protocol.HeartbeatInput{Settings: settings, KeepRecentMessages: hb.KeepRecentMessages, Interval: every}}})
	} else {
		off = append(off, protocol.HeartbeatScheduleID)
	}
	return on, off
}

// EnsureUpkeep makes the dream, idle-compact and heartbeat schedules match the config:
// created or updated when on, deleted when off.
func EnsureUpkeep(ctx context.Context, c client.Client, cfg *config.Config) error {
	on, off := UpkeepSchedules(cfg)
	var errs []error
	for _, s := range on {
		errs = append(errs, schedules.Ensure(ctx, c, s))
	}
	for _, id := range off {
		errs = append(errs, schedules.Delete(ctx, c, id))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("upkeep schedules: %w", err)
	}
	return nil
}
