package protocol

import "time"

// Scheduled turns: a fired Temporal Schedule (a cron job, the heartbeat)
// starts a small workflow that publishes the job's message into its
// session; the turn then runs like any other.
const (
	ScheduledTurnWorkflowName = "ScheduledTurnWorkflow"

	ActivityPublishScheduled = "PublishScheduled"
	ActivityDeleteSchedule   = "DeleteSchedule"

	// CronSchedulePrefix names a cron job's schedule: cron/<job id>.
	CronSchedulePrefix = "cron/"
	// HeartbeatScheduleID is the heartbeat's schedule.
	HeartbeatScheduleID = "heartbeat"
	// HeartbeatSessionKey is the session heartbeat turns keep their journal in.
	HeartbeatSessionKey = "heartbeat"
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

// The heartbeat: its schedule starts HeartbeatWorkflow, which runs a turn
// in the heartbeat session when HEARTBEAT.md has active tasks and tells the
// most recently active chat only when a model call decides it should.
const (
	HeartbeatWorkflowName = "HeartbeatWorkflow"

	// ActivityHeartbeatTasks reads the active tasks of HEARTBEAT.md.
	ActivityHeartbeatTasks = "HeartbeatTasks"
	// ActivityHeartbeatDecide picks the chat and asks evaluate_notification (on the LLM queue).
	ActivityHeartbeatDecide = "HeartbeatDecide"
	// ActivityHeartbeatTrim keeps the last messages of the heartbeat session.
	ActivityHeartbeatTrim = "HeartbeatTrim"
)

// HeartbeatInput is the heartbeat schedule's action.
type HeartbeatInput struct {
	Settings Settings `json:"settings"`
	// KeepRecentMessages is how much of the heartbeat session survives a run.
	KeepRecentMessages int `json:"keep_recent_messages"`
	// Interval is the schedule's; a notification waits at most this long for its channel.
	Interval time.Duration `json:"interval"`
}

// HeartbeatTasks is what HEARTBEAT.md asks for: "" means nothing to do.
type HeartbeatTasks struct {
	Tasks string `json:"tasks"` // at most PreviewBytes
	Chars int    `json:"chars"`
}

// HeartbeatDecideInput asks whether a heartbeat turn's reply is worth a notification.
type HeartbeatDecideInput struct {
	SessionKey string   `json:"session_key"`
	Turn       string   `json:"turn"` // the heartbeat turn whose reply is judged
	Tasks      string   `json:"tasks"`
	Settings   Settings `json:"settings"`
}

// HeartbeatDecision is evaluate_notification's answer and where it would go.
type HeartbeatDecision struct {
	Notify bool   `json:"notify"`
	Reason string `json:"reason"`
	// Route is the most recently active chat (nil: none, so nobody is told).
	Route *Route `json:"route,omitempty"`
	// EntryID is the reply in the heartbeat session's journal; Text is its preview.
	EntryID string `json:"entry_id,omitempty"`
	Text    string `json:"text,omitempty"`
}

// HeartbeatTrimInput keeps the last Keep messages of a session.
type HeartbeatTrimInput struct {
	SessionKey string `json:"session_key"`
	Keep       int    `json:"keep"`
}

// HeartbeatResult is what one heartbeat run did.
type HeartbeatResult struct {
	// Ran: there were active tasks and a turn ran.
	Ran        bool   `json:"ran"`
	StopReason string `json:"stop_reason,omitempty"`
	Notified   bool   `json:"notified"`
	// Reason says why the chat was or was not told.
	Reason string `json:"reason"`
	Route  *Route `json:"route,omitempty"`
	// Kept is how many messages the heartbeat session kept.
	Kept int `json:"kept,omitempty"`
}
