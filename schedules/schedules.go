// Package schedules keeps Temporal Schedules with readable IDs ("dream",
// "idle-compact", "cron/<job>"): create or update one to match a Spec,
// delete it, fire it now. Every schedule skips a run while the previous
// one still runs and catches up missed runs only within a bounded window.
package schedules

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// Kind is what a schedule is for; it goes into the memo as "kind".
type Kind string

// The kinds of nanobot's schedules.
const (
	KindMemory    Kind = "memory"    // Dream, idle compaction
	KindHeartbeat Kind = "heartbeat" // the heartbeat
	KindCron      Kind = "cron"      // a cron job
	KindDisk      Kind = "disk"      // the retention sweep
)

// Spec is one schedule: when it fires and which workflow it starts.
type Spec struct {
	// ID is readable and stable: it names the schedule in the UI and the CLI.
	ID string
	// Name and Kind go into the memo ("Dream", memory).
	Name string
	Kind Kind
	// Every fires at a fixed interval; Cron (5 fields) fires on a calendar;
	// At fires once at that instant. One of them.
	Every    time.Duration
	Cron     string
	TimeZone string
	At       time.Time
	// Workflow is the workflow type the schedule starts, with Args, on TaskQueue.
	Workflow  string
	Args      []any
	TaskQueue string
	// CatchupWindow bounds how late a missed run may still start (0: see catchup).
	CatchupWindow time.Duration
	// Memo adds fields to the memo (the session of a cron job).
	Memo map[string]any
}

func (s Spec) memo() map[string]any {
	m := map[string]any{"name": s.Name, "kind": string(s.Kind)}
	for k, v := range s.Memo {
		m[k] = v
	}
	return m
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
	set := 0
	for _, on := range []bool{s.Every > 0, s.Cron != "", !s.At.IsZero()} {
		if on {
			set++
		}
	}
	switch {
	case set > 1:
		return client.ScheduleSpec{}, fmt.Errorf("schedule %s: give one of an interval, a cron expression or a time", s.ID)
	case !s.At.IsZero():
		return atSpec(s.At), nil
	case s.Every > 0:
		return client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: s.Every}}}, nil
	case s.Cron != "":
		return client.ScheduleSpec{CronExpressions: []string{s.Cron}, TimeZoneName: s.TimeZone}, nil
	}
	return client.ScheduleSpec{}, fmt.Errorf("schedule %s: no interval, no cron expression and no time", s.ID)
}

// atSpec matches one second of one day (UTC); with one remaining action the
// schedule fires once and its next run time shows in the UI and in lists.
func atSpec(at time.Time) client.ScheduleSpec {
	at = at.UTC().Truncate(time.Second)
	one := func(v int) []client.ScheduleRange { return []client.ScheduleRange{{Start: v, End: v}} }
	return client.ScheduleSpec{
		Calendars: []client.ScheduleCalendarSpec{{
			Second: one(at.Second()), Minute: one(at.Minute()), Hour: one(at.Hour()),
			DayOfMonth: one(at.Day()), Month: one(int(at.Month())), Year: one(at.Year()),
			DayOfWeek: []client.ScheduleRange{{Start: 0, End: 6}},
		}},
		TimeZoneName: "UTC",
	}
}

// remaining limits an "at" schedule to its one firing (0: unlimited).
func (s Spec) remaining() int {
	if !s.At.IsZero() {
		return 1
	}
	return 0
}

func (s Spec) action() *client.ScheduleWorkflowAction {
	return &client.ScheduleWorkflowAction{ID: s.ID, Workflow: s.Workflow, Args: s.Args, TaskQueue: s.TaskQueue}
}

func (s Spec) options(spec client.ScheduleSpec) client.ScheduleOptions {
	return client.ScheduleOptions{
		ID: s.ID, Spec: spec, Action: s.action(),
		Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP, CatchupWindow: s.catchup(),
		Memo: s.memo(), RemainingActions: s.remaining(),
	}
}

// Ensure creates the schedule, or updates an existing one to match.
func Ensure(ctx context.Context, c client.Client, s Spec) error {
	spec, err := s.spec()
	if err != nil {
		return err
	}
	_, err = c.ScheduleClient().Create(ctx, s.options(spec))
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

// Create creates a new schedule; one with that ID already there is an error.
func Create(ctx context.Context, c client.Client, s Spec) error {
	spec, err := s.spec()
	if err != nil {
		return err
	}
	if _, err = c.ScheduleClient().Create(ctx, s.options(spec)); err != nil {
		return fmt.Errorf("create schedule %s: %w", s.ID, err)
	}
	return nil
}

// IDs lists the IDs of the schedules whose ID starts with prefix, sorted.
func IDs(ctx context.Context, c client.Client, prefix string) ([]string, error) {
	it, err := c.ScheduleClient().List(ctx, client.ScheduleListOptions{PageSize: 200})
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	var ids []string
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("list schedules: %w", err)
		}
		if strings.HasPrefix(e.ID, prefix) {
			ids = append(ids, e.ID)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// IsNotFound reports whether err says a schedule does not exist.
func IsNotFound(err error) bool {
	var notFound *serviceerror.NotFound
	return errors.As(err, &notFound)
}

// Describe returns the schedule's current definition and memo.
func Describe(ctx context.Context, c client.Client, id string) (*client.ScheduleDescription, error) {
	return c.ScheduleClient().GetHandle(ctx, id).Describe(ctx)
}
