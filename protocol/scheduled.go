package protocol

// Scheduled turns: a fired Temporal Schedule (a cron job, the heartbeat)
// starts a small workflow that publishes the job's message into its
// session; the turn then runs like any other.
const (
	ScheduledTurnWorkflowName = "ScheduledTurnWorkflow"
	HeartbeatWorkflowName     = "HeartbeatWorkflow"

	ActivityPublishScheduled = "PublishScheduled"
	ActivityDeleteSchedule   = "DeleteSchedule"
	ActivityHeartbeatCheck   = "HeartbeatCheck"
	ActivityHeartbeatDecide  = "HeartbeatDecide"
	ActivityHeartbeatTrim    = "HeartbeatTrim"

	// CronSchedulePrefix names a cron job's schedule: cron/<job id>.
	CronSchedulePrefix = "cron/"
	// HeartbeatScheduleID is the heartbeat's schedule.
	HeartbeatScheduleID = "heartbeat"
	// HeartbeatSessionKey is the session heartbeat turns keep their journal in.
	HeartbeatSessionKey = "heartbeat"
)

// Kinds of scheduled messages (Inbound.Kind).
const (
	KindCron      = "cron"      // a cron job fired: the turn may not add jobs
	KindHeartbeat = "heartbeat" // the heartbeat's turn: no message tool
)

// Scheduled reports whether a message kind comes from a schedule.
func Scheduled(kind string) bool { return kind == KindCron || kind == KindHeartbeat }

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

// HeartbeatInput is the heartbeat schedule's action.
type HeartbeatInput struct {
	Settings Settings `json:"settings"`
	// KeepRecentMessages is how much of the heartbeat session is kept.
	KeepRecentMessages int `json:"keep_recent_messages"`
}

// HeartbeatCheckResult tells whether HEARTBEAT.md has active tasks, and
// which chat a result would go to.
type HeartbeatCheckResult struct {
	Active bool   `json:"active"`
	Tasks  string `json:"tasks,omitempty"` // a preview of the active tasks
	// Target is the most recently active chat; nil when there is none.
	Target *Route `json:"target,omitempty"`
	// TargetSession is that chat's session.
	TargetSession string `json:"target_session,omitempty"`
}

// HeartbeatDecideInput asks whether a heartbeat result is worth a notification.
type HeartbeatDecideInput struct {
	Turn     string   `json:"turn"`
	Reply    string   `json:"reply"`
	Tasks    string   `json:"tasks"`
	Settings Settings `json:"settings"`
}

// HeartbeatDecision is the evaluate_notification answer.
type HeartbeatDecision struct {
	Notify bool   `json:"notify"`
	Reason string `json:"reason,omitempty"`
}

// HeartbeatResult is how a heartbeat run ended.
type HeartbeatResult struct {
	Ran      bool   `json:"ran"`
	Notified bool   `json:"notified"`
	Reason   string `json:"reason,omitempty"`
}

// HeartbeatTrimInput keeps the last Keep messages of the heartbeat session.
type HeartbeatTrimInput struct {
	SessionKey string `json:"session_key"`
	Keep       int    `json:"keep"`
}
