package protocol

import (
	"fmt"
	"hash/fnv"
	"strings"
	"time"
)

// Human approval: a tool call the policy asks about is not started; the
// workflow that made it records a request in the origin chat's session,
// shows it there and waits for an answer (SignalApproval) or its timer.
const (
	// SignalApproval carries an ApprovalAnswer to the workflow that asked.
	SignalApproval = "approval"
	// ActivityApprovalAsk records a request (or finds it allowed "always").
	ActivityApprovalAsk = "ApprovalAsk"
	// ActivityApprovalClose ends a request the asker stops waiting for (a timeout).
	ActivityApprovalClose = "ApprovalClose"
	// ActivityApprovalVerify checks an answer's proof where the owner key is, outside history.
	ActivityApprovalVerify = "ApprovalVerify"
	// ReplyApproval is a reply that asks the chat to approve a call.
	ReplyApproval ReplyKind = "approval"
	// DefaultApprovalTimeout is tools.approval.timeoutS's default: a day.
	DefaultApprovalTimeout = 24 * time.Hour
)

// Verdicts of an answer.
const (
	VerdictApprove   = "approve"
	VerdictAlways    = "always" // approve, and this exact call from now on in this chat
	VerdictRule      = "rule"   // approve, and the prefix rule the request offered
	VerdictDeny      = "deny"
	VerdictTimeout   = "timeout"
	VerdictCancelled = "cancelled" // the task was stopped while it waited
)

// AskRef is the policy's third verdict on a call: ask a person first.
type AskRef struct {
	// Reason is one line on why ("exec: matches rm -rf").
	Reason string `json:"reason"`
	// Key is the exact call "always" covers: "exec rm -rf build", "write_file notes/a.md".
	Key string `json:"key"`
	// Rule is the prefix rule the request offers ("exec npm test": `npm test*`), "" for none.
	Rule string `json:"rule,omitempty"`
	// Once: the exec guard refuses the call, so it is asked every time and never "always".
	Once bool `json:"once,omitempty"`
	// Args is the call's key argument as a person reads it (the command, the path).
	Args string `json:"args,omitempty"`
}

// ApprovalID is a request's short id, from the asking workflow and the
// call: the same on every replay and retry, short enough to type.
func ApprovalID(workflowID, callID string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(workflowID + "/" + callID))
	return fmt.Sprintf("%04x", h.Sum32()&0xffff)
}

// ApprovalAskInput is what the asking workflow records.
type ApprovalAskInput struct {
	// OriginKey is the session of the chat that is asked (the turn's own, a subagent's origin).
	OriginKey  string `json:"origin_key"`
	WorkflowID string `json:"workflow_id"`
	// ID is the request's short id, unique in its workflow run.
	ID     string `json:"id"`
	Tool   string `json:"tool"`
	Args   string `json:"args"`
	Reason string `json:"reason"`
	Key    string `json:"key"`
	Rule   string `json:"rule,omitempty"`
	Once   bool   `json:"once,omitempty"`
	// RunID is the asking run, which an answer's proof names.
	RunID string `json:"run_id,omitempty"`
	// Shown are the chats the request is shown in (channel and chat id): a
	// chat's answer counts only from one of them.
	Shown []Route `json:"shown,omitempty"`
}

// ApprovalAskResult: Allowed when the session said "always" for the key.
type ApprovalAskResult struct {
	Allowed bool            `json:"allowed,omitempty"`
	Request ApprovalRequest `json:"request"`
}

// ApprovalRequest is a request as the chat shows it.
type ApprovalRequest struct {
	ID      string    `json:"id"`
	Tool    string    `json:"tool"`
	Args    string    `json:"args"`
	Reason  string    `json:"reason"`
	Key     string    `json:"key"`
	Rule    string    `json:"rule,omitempty"`
	Once    bool      `json:"once,omitempty"`
	AskedAt time.Time `json:"asked_at"`
	// Timeout is how long the asker waits before it goes on without the call.
	Timeout time.Duration `json:"timeout"`
}

// Text is the request in plain words, with the commands that answer it:
// what a chat without buttons shows.
func (r ApprovalRequest) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Approval needed [%s]: %s\n", r.ID, r.Call())
	if r.Reason != "" {
		fmt.Fprintf(&b, "Why: %s\n", r.Reason)
	}
	switch {
	case r.Once:
		fmt.Fprintf(&b, "Reply /approve %s (this once: the exec guard refuses it, so it asks every time) or /deny %s [reason].", r.ID, r.ID)
	case r.Rule != "":
		fmt.Fprintf(&b, "Reply /approve %s, /approve %s always (this exact call in this chat), /approve %s rule (always %s here), or /deny %s [reason].",
			r.ID, r.ID, r.ID, r.RuleText(), r.ID)
	default:
		fmt.Fprintf(&b, "Reply /approve %s, /approve %s always (this exact call in this chat), or /deny %s [reason].", r.ID, r.ID, r.ID)
	}
	if r.Timeout > 0 {
		fmt.Fprintf(&b, " Without an answer in %s it is not run.", compactDuration(r.Timeout))
	}
	return b.String()
}

// Call is the call in one line: "exec rm -rf build/".
func (r ApprovalRequest) Call() string {
	if r.Args == "" {
		return r.Tool
	}
	return r.Tool + " " + r.Args
}

// RuleText is the offered rule as people read it: "`npm test*`".
func (r ApprovalRequest) RuleText() string { return RuleText(r.Rule) }

// RuleText shows a stored rule ("exec npm test") as "`npm test*`".
func RuleText(rule string) string {
	_, prefix, _ := strings.Cut(rule, " ")
	return "`" + prefix + "*`"
}

// ApprovalAnswer is a person's answer to a request.
type ApprovalAnswer struct {
	ID      string `json:"id"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
	// By names who answered ("telegram:12345").
	By string `json:"by,omitempty"`
	// Rule is what the answer allows from now on: the exact key (always) or the rule (rule).
	Rule string `json:"rule,omitempty"`
	// Message is the message that answered; it answers nothing else.
	Message string `json:"message,omitempty"`
	// Proof is the owner key's HMAC over the asking run, the id, the verdict
	// and the rule; the asker checks it before it runs the call.
	Proof string `json:"proof,omitempty"`
}

// Approved reports whether the call may run.
func (a ApprovalAnswer) Approved() bool {
	return a.Verdict == VerdictApprove || a.Verdict == VerdictAlways || a.Verdict == VerdictRule
}

// ApprovalVerifyInput is an answer the asking run checks before it runs the call.
type ApprovalVerifyInput struct {
	WorkflowID string         `json:"workflow_id"`
	RunID      string         `json:"run_id"`
	Answer     ApprovalAnswer `json:"answer"`
}

// ApprovalCloseInput ends a request nobody answered in time.
type ApprovalCloseInput struct {
	OriginKey string `json:"origin_key"`
	ID        string `json:"id"`
	// Verdict is why it closes: VerdictTimeout or VerdictCancelled.
	Verdict string `json:"verdict"`
}

// Approval commands: /approve [id] [always|rule], /deny [id] [reason], /approvals [clear].
const (
	ApproveCommand   = "/approve"
	DenyCommand      = "/deny"
	ApprovalsCommand = "/approvals"
)

// IsApprovalCommand reports whether a message answers an approval request.
func IsApprovalCommand(text string) bool {
	name, _, ok := ParseCommand(text)
	return ok && (name == ApproveCommand || name == DenyCommand)
}

// compactDuration shows a wait as people say it: "24h", "90m", "45s".
func compactDuration(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	case d >= time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	}
	return d.Round(time.Second).String()
}

// WaitingLine says what waits, as the Web UI, /status and `turn show` show it:
// "waiting for approval: exec rm -rf build/ (asked 12 min ago)".
func (r ApprovalRequest) WaitingLine(ago time.Duration) string {
	return fmt.Sprintf("waiting for approval: %s (asked %s)", r.Call(), AskedAgo(ago))
}

// AskedAgo is how long ago a request was made, for details: "12 min ago".
func AskedAgo(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%d days ago", int(d/(24*time.Hour)))
}
