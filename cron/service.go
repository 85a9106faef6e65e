package cron

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/schedules"
)

// systemJobs are the schedules nanobot itself keeps: listed, protected.
var systemJobs = map[string]string{
	"dream":                      "Dream memory consolidation for long-term memory.",
	protocol.HeartbeatScheduleID: "Heartbeat: works through the active tasks of HEARTBEAT.md.",
	"idle-compact":               "Compaction of sessions left idle.",
}

// timing is kept in the schedule's memo: Temporal describes a cron
// expression back as calendars, so the job's own words are kept beside it.
type timing struct {
	Kind         string    `json:"kind"`
	EverySeconds float64   `json:"every_seconds,omitempty"`
	Expr         string    `json:"expr,omitempty"`
	TZ           string    `json:"tz,omitempty"`
	At           time.Time `json:"at,omitzero"`
}

// Service adds, lists, removes and runs jobs on Temporal.
type Service struct {
	Client client.Client
	// Instance prefixes the schedule IDs (gateway.instance).
	Instance protocol.Instance
	// Now is the clock Validate checks "at" times against (nil: time.Now).
	Now func() time.Time

	// added are the schedules this Service created lately: Temporal lists
	// schedules from its visibility store, which lags a create by a moment,
	// and a job just added must be in the next list.
	mu    sync.Mutex
	added map[string]time.Time
}

// visibilityLag is how long a new schedule may be missing from Temporal's list.
const visibilityLag = time.Minute

// noteAdded remembers a schedule created here for List.
func (s *Service) noteAdded(sid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.added == nil {
		s.added = map[string]time.Time{}
	}
	s.added[sid] = time.Now()
}

// withAdded is ids with the schedules created here lately that are not in it yet.
func (s *Service) withAdded(ids []string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sid, at := range s.added {
		if time.Since(at) > visibilityLag {
			delete(s.added, sid)
			continue
		}
		if !slices.Contains(ids, sid) {
			ids = append(ids, sid)
		}
	}
	slices.Sort(ids)
	return ids
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// scheduleID is the schedule of a job or a system schedule, in this instance.
func (s *Service) scheduleID(id string) string {
	if _, system := systemJobs[id]; system {
		return s.Instance.Name(id)
	}
	return s.Instance.Name(protocol.CronScheduleID(id))
}

// spec is the schedule of a job.
func (s *Service) spec(j Job) schedules.Spec {
	in := protocol.ScheduledTurnInput{JobID: j.ID, Name: j.Name, Message: j.Message, SessionKey: j.SessionKey, Route: j.Route, Once: !j.At.IsZero()}
	return schedules.Spec{
		ID: s.scheduleID(j.ID), Name: j.Name, Kind: schedules.KindCron,
		Every: j.Every, Cron: j.Expr, TimeZone: j.TZ, At: j.At,
		Workflow: protocol.ScheduledTurnWorkflowName, Args: []any{in}, TaskQueue: s.Instance.TaskQueue(),
		Memo: map[string]any{
			"session": j.SessionKey, "message": j.Message,
			"timing": timing{Kind: j.Kind(), EverySeconds: j.Every.Seconds(), Expr: j.Expr, TZ: j.TZ, At: j.At},
		},
	}
}

// Add validates a job and creates its schedule. A job whose schedule
// already exists (a retried add with a derived ID) is returned as is.
func (s *Service) Add(ctx context.Context, j Job) (Job, error) {
	if j.ID == "" {
		j.ID = NewID()
	}
	if j.Name == "" {
		j.Name = DefaultName(j.Message)
	}
	if err := j.Validate(s.now()); err != nil {
		return Job{}, err
	}
	if j.SessionKey == "" {
		if j.Route.Channel == "" || j.Route.ChatID == "" {
			return Job{}, errors.New("no session context (channel/chat_id)")
		}
		j.SessionKey = protocol.SessionKey(j.Route.Channel, j.Route.ChatID)
	}
	err := schedules.Create(ctx, s.Client, s.spec(j))
	if errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		err = nil
	}
	if err == nil {
		s.noteAdded(s.scheduleID(j.ID))
	}
	return j, err
}

// Get reads one job (or system schedule) back from Temporal.
func (s *Service) Get(ctx context.Context, id string) (Job, error) {
	sid := s.scheduleID(id)
	purpose, system := systemJobs[id]
	desc, err := schedules.Describe(ctx, s.Client, sid)
	if err != nil {
		return Job{}, err
	}
	j := Job{ID: id, Protected: system, Purpose: purpose, Next: desc.Info.NextActionTimes}
	if st := desc.Schedule.State; st != nil && st.Paused {
		// Temporal still lists the times a paused schedule would fire at; it will not.
		j.Paused, j.Next = true, nil
	}
	fields := memoFields(desc.Memo)
	_ = decode(fields["name"], &j.Name)
	if system {
		if sp := desc.Schedule.Spec; sp != nil && len(sp.Intervals) > 0 {
			j.Every = sp.Intervals[0].Every
		}
		if j.Name == "" {
			j.Name = id
		}
		return j, nil
	}
	var tm timing
	_ = decode(fields["timing"], &tm)
	j.Expr, j.TZ, j.At = tm.Expr, tm.TZ, tm.At
	j.Every = time.Duration(tm.EverySeconds * float64(time.Second))
	if a, ok := desc.Schedule.Action.(*client.ScheduleWorkflowAction); ok && len(a.Args) > 0 {
		var in protocol.ScheduledTurnInput
		if p, ok := a.Args[0].(*commonpb.Payload); ok && decode(p, &in) == nil {
			j.Message, j.SessionKey, j.Route = in.Message, in.SessionKey, in.Route
		}
	}
	return j, nil
}

// List reads every job and system schedule from Temporal, by ID. A job
// deleted while listing is left out.
func (s *Service) List(ctx context.Context) ([]Job, error) {
	ids, err := schedules.IDs(ctx, s.Client, "")
	if err != nil {
		return nil, err
	}
	var jobs []Job
	for _, sid := range s.withAdded(ids) {
		own, mine := strings.CutPrefix(sid, s.Instance.Name(""))
		id, isJob := strings.CutPrefix(own, protocol.CronSchedulePrefix)
		if _, system := systemJobs[own]; !mine || (!isJob && !system) {
			continue
		}
		j, err := s.Get(ctx, id)
		if schedules.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// Outcomes of Remove.
const (
	Removed   = "removed"
	Protected = "protected"
	NotFound  = "not_found"
)

// Remove deletes a job's schedule; system schedules are protected.
func (s *Service) Remove(ctx context.Context, id string) (string, error) {
	if _, system := systemJobs[id]; system {
		return Protected, nil
	}
	sid := s.scheduleID(id)
	err := s.Client.ScheduleClient().GetHandle(ctx, sid).Delete(ctx)
	switch {
	case schedules.IsNotFound(err):
		return NotFound, nil
	case err != nil:
		return "", fmt.Errorf("remove job %s: %w", id, err)
	}
	return Removed, nil
}

// Run fires a job now (its schedule's trigger: skipped while its last run still runs).
func (s *Service) Run(ctx context.Context, id string) error {
	sid := s.scheduleID(id)
	if _, err := schedules.Describe(ctx, s.Client, sid); err != nil {
		if schedules.IsNotFound(err) {
			return fmt.Errorf("job %s not found", id)
		}
		return err
	}
	return schedules.Trigger(ctx, s.Client, sid)
}

func memoFields(m *commonpb.Memo) map[string]*commonpb.Payload {
	if m == nil {
		return nil
	}
	return m.GetFields()
}

func decode(p *commonpb.Payload, into any) error {
	if p == nil {
		return errors.New("no value")
	}
	return converter.GetDefaultDataConverter().FromPayload(p, into)
}
