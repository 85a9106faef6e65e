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

// Schedule IDs of memory and disk upkeep.
const (
	DreamScheduleID       = "dream"
	IdleCompactScheduleID = "idle-compact"
	DiskGCScheduleID      = "disk-gc"
)

// upkeep is one schedule the gateway keeps in step with the config. Its
// workflow takes no settings: a firing reads them from the config of its
// time, so a reloaded config reaches the next one.
type upkeep struct {
	id, name string
	kind     schedules.Kind
	workflow string
	arg      any
	memo     map[string]any
	// when is the timing this config asks for; false means the schedule is off.
	when func(cfg *config.Config) (timing, bool)
}

// timing is when a schedule fires: an interval, or a cron expression in a zone.
type timing struct {
	every    time.Duration
	cron, tz string
}

// upkeeps are the gateway's own schedules. Adding one is a row here, its
// workflow and its activities (workers/features.go).
var upkeeps = []upkeep{
	{id: DreamScheduleID, name: "Dream", kind: schedules.KindMemory, workflow: protocol.DreamWorkflowName, arg: protocol.DreamInput{},
		when: func(cfg *config.Config) (timing, bool) {
			d := cfg.Agents.Defaults
			if dm := d.Dream; dm.Enabled && dm.Cron != "" {
				return timing{cron: dm.Cron, tz: d.Timezone}, true
			}
			return timing{every: time.Duration(d.Dream.IntervalH) * time.Hour}, d.Dream.Enabled && d.Dream.IntervalH > 0
		}},
	{id: IdleCompactScheduleID, name: "Idle compaction", kind: schedules.KindMemory, workflow: protocol.IdleCompactWorkflowName, arg: protocol.IdleCompactInput{},
		when: func(cfg *config.Config) (timing, bool) {
			d := cfg.Agents.Defaults
			every := time.Duration(d.IdleCompactCheckIntervalSeconds) * time.Second
			if every <= 0 {
				every = time.Minute
			}
			return timing{every: every}, d.IdleCompactAfterMinutes > 0
		}},
	{id: protocol.HeartbeatScheduleID, name: "Heartbeat", kind: schedules.KindHeartbeat, workflow: protocol.HeartbeatWorkflowName, arg: protocol.HeartbeatInput{},
		memo: map[string]any{"session": protocol.HeartbeatSessionKey},
		when: func(cfg *config.Config) (timing, bool) {
			hb := cfg.Gateway.Heartbeat
			return timing{every: time.Duration(hb.IntervalS) * time.Second}, hb.Enabled && hb.IntervalS > 0
		}},
	{id: DiskGCScheduleID, name: "Disk gc", kind: schedules.KindDisk, workflow: protocol.DiskGCWorkflowName, arg: protocol.DiskGCInput{},
		when: func(cfg *config.Config) (timing, bool) {
			every := cfg.Retention.Ages().Interval
			return timing{every: every}, every > 0
		}},
}

// UpkeepSchedules are the schedules the config asks for (Dream, idle
// compaction, the heartbeat, disk gc); the IDs it leaves out (disabled) are returned in off.
func UpkeepSchedules(cfg *config.Config) (on []schedules.Spec, off []string) {
	inst := cfg.Instance()
	for _, u := range upkeeps {
		t, ok := u.when(cfg)
		if !ok {
			off = append(off, inst.Name(u.id))
			continue
		}
		on = append(on, schedules.Spec{ID: inst.Name(u.id), Name: u.name, Kind: u.kind, Every: t.every, Cron: t.cron, TimeZone: t.tz,
			Workflow: u.workflow, Args: []any{u.arg}, TaskQueue: inst.TaskQueue(), Memo: u.memo})
	}
	return on, off
}

// EnsureUpkeep makes the upkeep schedules match the config: created or
// updated when on, deleted when off. The gateway runs it at start and on
// every config reload.
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
