package dingtalk

import (
	"context"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// privateChatDisabled is nanobot's answer to a direct message when
// disablePrivateChat is on: "this robot does not chat privately; talk to
// me in a group".
const privateChatDisabled = "该机器人未开启私聊，请在群聊中与我对话。"

// Why a message is not taken in (logged at debug: a channel's usual traffic).
const (
	skipNotMentioned = "a group message that does not @-mention the robot"
	skipEmpty        = "empty or unsupported message type"
)

// takeCallback takes one of the stream's robot messages in (in the order
// they came) and acknowledges it once done with; one the agent did not get
// stays unacknowledged, so DingTalk pushes it again.
func (c *Channel) takeCallback(ctx context.Context, cb callback) {
	if !channels.Handed(c.handle(ctx, cb.f)) {
		return
	}
	if err := cb.conn.WriteJSON(ack(cb.f)); err != nil {
		c.Log.Debug("dingtalk ack not sent; the message comes again and is deduplicated", "message_id", cb.f.Headers.MessageID, "error", err)
	}
}

// handle takes one robot message in: checked, de-duplicated, filtered by
// nanobot's rules, turned into an inbound message and published; its
// files are fetched only once the manager admits the sender. The error is
// TakeIn's.
func (c *Channel) handle(ctx context.Context, f frame) error {
	m, id, err := decodeMessage(f.Data)
	if err != nil {
		c.Log.Warn("dingtalk message dropped", "msg_id", id, "message_id", f.Headers.MessageID, "error", err)
		return nil
	}
	if m.isGroup() && !m.mentionsBot() {
		c.Log.Debug("dingtalk message skipped", "why", skipNotMentioned, "msg_id", m.MsgID, "conversation", m.ConversationID)
		return nil
	}
	c.hooks.put(m)
	if !m.isGroup() && c.cfg.DisablePrivateChat {
		// nanobot's hard guard: before allowFrom, a notice and no session.
		c.Log.Info("dingtalk private chat disabled; the sender is told so", "msg_id", m.MsgID, "sender", m.sender())
		r := channels.Reply{Route: c.route(m), Text: privateChatDisabled, Kind: protocol.ReplySystem}
		if err := channels.SendParts(ctx, c, r); err != nil {
			c.Log.Warn("dingtalk private-chat notice not sent", "msg_id", m.MsgID, "error", err)
		}
		return nil
	}
	content, files := m.text()
	if content == "" && len(files) == 0 {
		c.Log.Warn("dingtalk message dropped", "why", skipEmpty, "msgtype", m.MsgType, "msg_id", m.MsgID)
		return nil
	}
	msg := c.inbound(m, content)
	admitted := func(ctx context.Context, msg *protocol.Inbound) error {
		paths, notes := c.downloadAll(ctx, m, files)
		msg.Media = append(msg.Media, paths...)
		msg.Content = channels.WithNotes(msg.Content, notes)
		if msg.Content == "" {
			msg.Content = placeholder(m.MsgType)
		}
		return nil
	}
	// DingTalk pushes again a callback whose ack it missed: taken in once.
	return c.TakeIn(ctx, "msg:"+m.MsgID, msg, admitted)
}

// route is where the answer to m goes; ReplyTo names m, whose
// sessionWebhook answers it while valid.
func (c *Channel) route(m robotMessage) protocol.Route {
	return protocol.Route{Channel: Name, ChatID: m.chatID(), SenderID: m.sender(), ReplyTo: m.MsgID}
}

// inbound is the message the agent gets; with groupUserIsolation each
// member of a group has a session of their own, as in nanobot.
func (c *Channel) inbound(m robotMessage, content string) protocol.Inbound {
	meta := map[string]string{
		channels.MetaMessageID: m.MsgID, "sender_name": m.SenderNick, "conversation_type": m.ConversationType,
	}
	if m.ConversationTitle != "" {
		meta["conversation_title"] = m.ConversationTitle
	}
	msg := protocol.Inbound{
		ID: "dingtalk:" + m.MsgID, Route: c.route(m), Content: content, Group: m.isGroup(),
		SentAt: sentAt(m.CreateAt), Metadata: meta,
	}
	if m.isGroup() && c.cfg.GroupUserIsolation {
		msg.Scope = protocol.Within(m.sender())
	}
	return msg
}

// placeholder is the text of a message of files only, as nanobot writes it.
func placeholder(msgType string) string {
	if msgType == "picture" {
		return "[Image]"
	}
	return "[File]"
}

func sentAt(ms int64) time.Time {
	if ms <= 0 {
		return time.Now()
	}
	return time.UnixMilli(ms)
}
