package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/cron"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/schedules"
)

// Cron is a fired job's side: its message into its session, and an "at"
// job's schedule removed once it fired.
type Cron struct {
	client client.Client
	config func() *config.Config // the settings of the turn a job starts
}

// PublishScheduled puts a fired job's message into its session, marked
// as scheduled and carrying the job's route: the turn that answers it runs
// like any other and replies to the chat the job came from. While the
// session's turn runs, it waits (nanobot defers cron turns of a busy session).
func (a *Cron) PublishScheduled(ctx context.Context, in protocol.PublishScheduledInput) error {
	if a.client == nil {
		return temporal.NewNonRetryableApplicationError("scheduled turns need a Temporal client", protocol.ErrConfig, nil)
	}
	job := in.Job
	idle, err := cron.WaitIdle(ctx, a.client, instanceOf(ctx), job.SessionKey, cron.DefaultBusyWait, func() { activity.RecordHeartbeat(ctx) })
	if err != nil {
		return fmt.Errorf("job %s: wait for session %s: %w", job.JobID, job.SessionKey, err)
	}
	if !idle {
		activity.GetLogger(ctx).Warn("cron job's session stayed busy; its message joins the running turn",
			"job", job.JobID, "session", job.SessionKey, "waited", cron.DefaultBusyWait)
	}
	msg := protocol.Inbound{
		ID: in.Fired, SessionKey: job.SessionKey, Route: job.Route, Kind: protocol.CronTurn,
		Content:  cron.Prompt(job.Name, job.Message),
		Metadata: map[string]string{"cron_job_id": job.JobID, "cron_job_name": job.Name},
		SentAt:   time.Now(),
	}
	bus := &channels.Bus{Client: a.client, Settings: currentConfig(a.config).TurnSettings(), Instance: instanceOf(ctx)}
	if _, err := bus.Publish(ctx, msg); err != nil {
		return fmt.Errorf("publish job %s: %w", job.JobID, err)
	}
	return nil
}

// DeleteSchedule removes a schedule (an "at" job once it fired).
func (a *Cron) DeleteSchedule(ctx context.Context, id string) error {
	if a.client == nil {
		return errors.New("deleting a schedule needs a Temporal client")
	}
	return schedules.Delete(ctx, a.client, id)
}
