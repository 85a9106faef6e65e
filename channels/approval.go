package channels

import (
	"github.com/nanobot-durable/nanobot/protocol"
)

// ApprovalButton is one answer to an approval request, as a chat with
// buttons offers it. Pressing it sends Command as the presser's message,
// through the same gate (Manager.Admit) as a typed one.
type ApprovalButton struct {
	Label string
	// Command is the message a press becomes: "/approve 1a2b", "/deny 1a2b", "/approve 1a2b always".
	Command string
	// Verdict tells a platform how to style it (protocol.VerdictApprove, VerdictDeny, VerdictAlways).
	Verdict string
}

// ApprovalButtons are a request's answers in the order chats show them.
func ApprovalButtons(req protocol.ApprovalRequest) []ApprovalButton {
	return []ApprovalButton{
		{Label: "Approve", Command: protocol.ApproveCommand + " " + req.ID, Verdict: protocol.VerdictApprove},
		{Label: "Deny", Command: protocol.DenyCommand + " " + req.ID, Verdict: protocol.VerdictDeny},
		{Label: "Always in this chat", Command: protocol.ApproveCommand + " " + req.ID + " always", Verdict: protocol.VerdictAlways},
	}
}

// Buttons are the approval buttons to draw under the reply: none unless it
// asks for approval.
func (r Reply) Buttons() []ApprovalButton {
	if r.Kind != protocol.ReplyApproval || r.Approval == nil || r.Approval.ID == "" {
		return nil
	}
	return ApprovalButtons(*r.Approval)
}

// IsApprovalPress reports whether a button's payload is an answer a chat
// may turn into a message: a press carries only what the bot drew, but a
// payload from an older build or another bot must not become a message.
func IsApprovalPress(payload string) bool {
	return len(payload) <= maxPressBytes && protocol.IsApprovalCommand(payload)
}

// maxPressBytes is Telegram's limit on callback_data, the smallest of the platforms'.
const maxPressBytes = 64
