package activities

import (
	"slices"

	"github.com/nanobot-durable/nanobot/owner"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Who may answer a request: a message whose seal opens with the owner key
// and was sealed for this session, either admitted by a channel into a chat
// the request was shown in, or sent by the owner's CLI. Nothing else
// answers (cron firings, subagent announcements, raw signals: unsealed).
const (
	answerRefusedText = "Only someone in the chat that was asked, or the owner's CLI, can answer this request."
	clearRefusedText  = "Only someone admitted to this chat, or the owner's CLI, can clear its approvals."
)

// vouch is who the owner key says sent the message (owner.ByChat,
// owner.ByOwner), or "" and why not.
func (c *Commands) vouch(in protocol.StepInput) (by, why string) {
	msg := in.Message
	if msg.Kind != "" {
		return "", "a " + string(msg.Kind) + " message" // nobody admitted a fired cron job or the heartbeat
	}
	by, err := c.owner.Opened(msg)
	switch {
	case err != nil:
		return "", err.Error()
	case msg.SessionKey != in.SessionKey:
		return "", "sealed for session " + msg.SessionKey
	}
	return by, ""
}

// refused logs who tried to answer (or clear) and why it did not count.
func (c *Commands) refused(in protocol.StepInput, what, why string) {
	r := in.Message.Route
	c.log.Warn("approval command refused: not from a person of the chat that was asked, nor the owner's CLI",
		"command", what, "session", in.SessionKey, "channel", r.Channel, "chat", r.ChatID, "sender", r.SenderID,
		"message", in.Message.ID, "proof", why)
}

// shownIn reports whether the request was shown in the message's chat. A
// record from before requests remembered their chats was shown in its session's chat.
func (r approvalRecord) shownIn(sessionKey string, route protocol.Route) bool {
	shown := r.Shown
	if len(shown) == 0 {
		if channel, chatID, err := protocol.SplitSessionKey(sessionKey); err == nil {
			shown = []protocol.Route{{Channel: channel, ChatID: chatID}}
		}
	}
	return slices.Contains(shown, protocol.Route{Channel: route.Channel, ChatID: route.ChatID})
}

// mayAnswer reports whether a message vouched for as by may answer r.
func (r approvalRecord) mayAnswer(by, sessionKey string, route protocol.Route) bool {
	return by == owner.ByOwner || (by == owner.ByChat && r.shownIn(sessionKey, route))
}
