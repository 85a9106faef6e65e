package protocol

import "time"

const (
	// HeartbeatScheduleID is the heartbeat's schedule.
	HeartbeatScheduleID = "heartbeat"
	// HeartbeatSessionKey is the session heartbeat turns keep their journal in.
	HeartbeatSessionKey = "heartbeat"
)

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

// HeartbeatInput is the heartbeat schedule's action: nothing, the firing
// reads its settings from the config of its time (HeartbeatTasks).
type HeartbeatInput struct{}

// HeartbeatTasks is what HEARTBEAT.md asks for ("" means nothing to do),
// and how this firing runs, from the worker's current config.
type HeartbeatTasks struct {
	Tasks string `json:"tasks"` // at most PreviewBytes
	Chars int    `json:"chars"`
	// Settings are the heartbeat turn's.
	Settings Settings `json:"settings"`
	// KeepRecentMessages is how much of the heartbeat session survives a run.
	KeepRecentMessages int `json:"keep_recent_messages"`
	// Interval is gateway.heartbeat.intervalS; a notification waits at most this long for its channel.
	Interval time.Duration `json:"interval"`
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
