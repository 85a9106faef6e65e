// Package schedules keeps Temporal Schedules with readable IDs ("dream",
// "idle-compact", "cron/<job>"): create or update one to match a Spec,
// delete it, fire it now. Every schedule skips a run while the previous
// one still runs and catches up missed runs only within a bounded window.
package schedules

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// Spec is one schedule: when it fires and which workflow it starts.
type Spec struct {
	// ID is readable and stable: it names the schedule in the UI and the CLI.
	ID string
	// Name and Kind go into the memo ("Dream", "memory").
	Name, Kind string
	// Every fires at a fixed interval; Cron (5 fields) fires on a calendar. One of them.
	Every    time.Duration
	Cron     string
	TimeZone string
	// Workflow is the workflow type the schedule starts, with Args, on TaskQueue.
	Workflow  string
	Args      []any
	TaskQueue string
	// CatchupWindow bounds how late a missed run may still start (0: see catchup).
	CatchupWindow time.Duration
}

// catchup bounds the window: missed runs older than one interval (at most
// an hour, at least Temporal's 10 s minimum) are skipped, not replayed in a burst.
func (s Spec) catchup() time.Duration {
	if s.CatchupWindow > 0 {
		return max(s.CatchupWindow, 10*time.Second)
	}
	w := time.Hour
	if s.Every > 0 {
		w = min(s.Every, time.Hour)
	}
	return max(w, 10*time.Second)
}

func (s Spec) spec() (client.ScheduleSpec, error) {
	switch {
	case s.Every > 0 && s.Cron != "":
		return client.ScheduleSpec{}, fmt.Errorf("schedule %s: give an interval or a cron expression, not both", s.ID)
	case s.Every > 0:
		return client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: s.Every}}}, nil
	case s.Cron != "":
		return client.ScheduleSpec{CronExpressions: []string{s.Cron}, TimeZoneName: s.TimeZone}, nil
	}
	return client.ScheduleSpec{}, fmt.Errorf("schedule %s: no interval and no cron expression", s.ID)
}

func (s Spec) action() *client.ScheduleWorkflowAction {
	return &client.ScheduleWorkflowAction{ID: s.ID, Workflow: s.Workflow, Args: s.Args, TaskQueue: s.TaskQueue}
}

// Ensure creates the schedule, or updates an existing one to match.
func Ensure(ctx context.Context, c client.Client, s Spec) error {
	spec, err := s.spec()
	if err != nil {
		return err
	}
	_, err = c.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID: s.ID, Spec: spec, Action: s.action(),
		Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP, CatchupWindow: s.catchup(),
		Memo: map[string]any{"name": s.Name, "kind": s.Kind},
	})
	if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		if err != nil {
			return fmt.Errorf("create schedule %s: %w", s.ID, err)
		}
		return nil
	}
	err = c.ScheduleClient().GetHandle(ctx, s.ID).Update(ctx, client.ScheduleUpdateOptions{
		DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
			sched := in.Description.Schedule
			sched.Spec = &spec
			sched.Action = s.action()
			if sched.Policy == nil {
				sched.Policy = &client.SchedulePolicies{}
			}
			sched.Policy.Overlap = enumspb.SCHEDULE_OVERLAP_POLICY_SKIP
			sched.Policy.CatchupWindow = s.catchup()
			return &client.ScheduleUpdate{Schedule: &sched}, nil
		},
	})
	if err != nil {
		return fmt.Errorf("update schedule %s: %w", s.ID, err)
	}
	return nil
}

// Delete removes a schedule; one that does not exist is fine.
func Delete(ctx context.Context, c client.Client, id string) error {
	err := c.ScheduleClient().GetHandle(ctx, id).Delete(ctx)
	var notFound *serviceerror.NotFound
	if err != nil && !errors.As(err, &notFound) {
		return fmt.Errorf("delete schedule %s: %w", id, err)
	}
	return nil
}

// Trigger fires a schedule now (skipped if its last run still runs).
func Trigger(ctx context.Context, c client.Client, id string) error {
	err := c.ScheduleClient().GetHandle(ctx, id).Trigger(ctx, client.ScheduleTriggerOptions{Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP})
	if err != nil {
		return fmt.Errorf("trigger schedule %s: %w", id, err)
	}
	return nil
}

// Describe returns the schedule's current definition and memo.
func Describe(ctx context.Context, c client.Client, id string) (*client.ScheduleDescription, error) {
	return c.ScheduleClient().GetHandle(ctx, id).Describe(ctx)
}
