package protocol

// Messages between sessions (send_session_message): the message starts or
// joins the target's turn; a sender that expects a reply starts a
// SessionReplyWaitWorkflow that tells it when none came in time. A reply
// (a send the other way) cancels that wait.
const (
	SessionReplyWaitWorkflowName = "SessionReplyWaitWorkflow"
	ActivitySessionReplyTimeout  = "SessionReplyTimeout"
)

// SessionReplyWaitID is the workflow of source's wait for target's reply:
// one per pair, so a new wait replaces the old.
func SessionReplyWaitID(source, target string) string {
	return "session-reply/" + source + "/" + target
}

// SessionReplyWait is one wait for a reply.
type SessionReplyWait struct {
	Source         string   `json:"source"` // the session told when no reply came
	Target         string   `json:"target"`
	TargetHandle   string   `json:"target_handle"`
	TimeoutSeconds int      `json:"timeout_seconds"`
	Settings       Settings `json:"settings"`
}
