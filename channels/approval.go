package channels

import (
	"context"
	"strings"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
)

// ApprovalButton is one answer to an approval request, as a chat with
// buttons offers it. Pressing it sends Command as the presser's message,
// through the same gate (Manager.Admit) as a typed one.
type ApprovalButton struct {
	Label string
	// Command is the message a press becomes: "/approve 1a2b", "/deny 1a2b", "/approve 1a2b always", "/approve 1a2b rule".
	Command string
	// Verdict tells a platform how to style it (protocol.VerdictApprove, VerdictDeny, VerdictAlways, VerdictRule).
	Verdict string
}

// maxRuleLabel keeps a rule's button short enough for every platform's label.
const maxRuleLabel = 40

// ApprovalButtons are a request's answers in the order chats show them:
// "always" only when the guard lets the call be allowed again, the rule
// only when the request offers one, its label showing it.
func ApprovalButtons(req protocol.ApprovalRequest) []ApprovalButton {
	buttons := []ApprovalButton{
		{Label: "Approve", Command: protocol.ApproveCommand + " " + req.ID, Verdict: protocol.VerdictApprove},
		{Label: "Deny", Command: protocol.DenyCommand + " " + req.ID, Verdict: protocol.VerdictDeny},
	}
	if req.Once {
		return buttons
	}
	buttons = append(buttons, ApprovalButton{Label: "Always this command", Command: protocol.ApproveCommand + " " + req.ID + " always", Verdict: protocol.VerdictAlways})
	if req.Rule != "" {
		buttons = append(buttons, ApprovalButton{Label: "Always " + chat.Preview(strings.Trim(req.RuleText(), "`"), maxRuleLabel) + " here",
			Command: protocol.ApproveCommand + " " + req.ID + " rule", Verdict: protocol.VerdictRule})
	}
	return buttons
}

// VerdictStyle is a platform's style for a button: approve and deny are
// set apart (green and red, as a platform names them), the "always" answers
// look like any other button.
func VerdictStyle[S any](verdict string, approve, deny, other S) S {
	switch verdict {
	case protocol.VerdictApprove:
		return approve
	case protocol.VerdictDeny:
		return deny
	}
	return other
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

// TakePress hands a press of an approval button (or a reaction naming one)
// to the agent as the presser's message, through the manager's gate like a
// typed one and under TakeIn's loss rule. answered (the request loses its
// buttons) runs only once the presser got through and the agent took it:
// a refused presser leaves the request open for someone allowed.
func (b *Base) TakePress(ctx context.Context, key string, msg protocol.Inbound, answered func()) error {
	admitted := false
	err := b.TakeIn(ctx, key, msg, func(context.Context, *protocol.Inbound) error { admitted = true; return nil })
	if err == nil && admitted {
		answered()
	}
	return err
}
