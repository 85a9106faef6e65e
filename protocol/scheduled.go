package protocol

// Scheduled turns: a fired cron job's Temporal Schedule
// starts a small workflow that publishes the job's message into its
// session; the turn then runs like any other.
const (
	ScheduledTurnWorkflowName = "ScheduledTurnWorkflow"

	ActivityPublishScheduled = "PublishScheduled"
	ActivityDeleteSchedule   = "DeleteSchedule"

	// CronSchedulePrefix names a cron job's schedule: cron/<job id>.
	CronSchedulePrefix = "cron/"
)

// CronScheduleID is the schedule of one cron job.
func CronScheduleID(jobID string) string { return CronSchedulePrefix + jobID }

// ScheduledTurnInput is a cron job's action: what to say, in which
// session, and where the reply goes.
type ScheduledTurnInput struct {
	JobID      string `json:"job_id"`
	Name       string `json:"name"`
	Message    string `json:"message"`
	SessionKey string `json:"session_key"`
	Route      Route  `json:"route"`
	// Once: an "at" job, whose schedule is deleted once it fired.
	Once bool `json:"once,omitempty"`
}

// PublishScheduledInput publishes one firing of a job.
type PublishScheduledInput struct {
	Job ScheduledTurnInput `json:"job"`
	// Fired names this firing (the scheduled workflow's ID and run), so a
	// retried publish is recognisable.
	Fired string `json:"fired"`
}
