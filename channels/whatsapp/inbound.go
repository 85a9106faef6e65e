package whatsapp

import (
	"context"
	"strings"
	"time"

	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Why a message is not taken in (logged at debug: a chat's usual traffic).
const (
	skipOwn        = "sent by this account"
	skipBroadcast  = "a status update, broadcast list or channel post"
	skipNoIdentity = "the bot's identity is not known yet"
	skipNothing    = "nothing to read (a reaction, receipt or protocol message)"
	skipEdit       = "an edit of a message already taken in"
)

// handle takes one message in: checked, de-duplicated, filtered by
// nanobot's rules, turned into an inbound message and published.
func (c *Channel) handle(ctx context.Context, client waClient, e *events.Message) {
	info := e.Info
	if e.Message == nil || info.ID == "" || info.Chat.IsEmpty() {
		c.Log.Warn("whatsapp message dropped: no content, id or chat", "message_id", info.ID, "chat", info.Chat.String())
		return
	}
	if why := c.skipReason(e); why != "" {
		c.Log.Debug("whatsapp message skipped", "why", why, "message_id", info.ID, "chat", info.Chat.String())
		return
	}
	sender, phone := c.senderID(ctx, client, info.MessageSource)
	if sender == "" {
		c.Log.Warn("whatsapp message dropped: no sender", "message_id", info.ID, "chat", info.Chat.String())
		return
	}
	c.quotes.put(info.ID, userJID(info.Sender), e.Message)
	att := mediaOf(e.Message)
	content := c.stripSelfMention(text(e.Message))
	if content == "" && att == nil {
		content = channels.EmptyMessage
	}
	meta := map[string]string{channels.MetaMessageID: info.ID, "participant": userJID(info.Sender).String()}
	if phone != "" {
		meta["phone"] = phone
	}
	if isLID(info.Sender) {
		meta["lid"] = userJID(info.Sender).String()
	}
	if info.PushName != "" {
		meta["push_name"] = info.PushName
	}
	msg := protocol.Inbound{
		ID:      "whatsapp:" + info.ID,
		Route:   protocol.Route{Channel: Name, ChatID: chatID(info.Chat), SenderID: sender, ReplyTo: info.ID},
		Content: content, Group: info.IsGroup, SentAt: sentAt(info.Timestamp), Metadata: meta,
	}
	admitted := func(ctx context.Context, msg *protocol.Inbound) error {
		c.markRead(ctx, client, info.MessageSource, info.ID)
		if att == nil {
			return nil
		}
		path, note := c.download(ctx, client, info.ID, att)
		if path != "" {
			msg.Media = append(msg.Media, path)
		}
		if note != "" {
			msg.Content = strings.TrimSpace(strings.TrimPrefix(msg.Content+"\n"+note, channels.EmptyMessage))
		}
		if msg.Content == "" {
			msg.Content = "[" + att.kind + "]"
		}
		return nil
	}
	// After a reconnect whatsmeow may hand over what it already did: taken in once.
	_ = c.TakeInPatiently(ctx, "message:"+chatID(info.Chat)+":"+info.ID, msg, admitted, channels.PublishPatience) // a message whatsmeow handed over is receipted: offered until Temporal takes it
}

// skipReason tells why a message is left alone, "" to take it. Who may
// talk is the manager's business (allowFrom, pairing), not this.
func (c *Channel) skipReason(e *events.Message) string {
	info := e.Info
	switch {
	case info.IsFromMe:
		return skipOwn
	case e.IsEdit:
		return skipEdit
	case info.Chat.Server == types.BroadcastServer || info.Chat.Server == types.NewsletterServer:
		return skipBroadcast
	case text(e.Message) == "" && mediaOf(e.Message) == nil:
		return skipNothing
	case !info.IsGroup:
		return ""
	}
	why := channels.GroupGateOf(Name, c.cfg.GroupPolicy, nil).Skip(chatID(info.Chat), func() bool { return c.addressed(e) })
	if self, selfLID := c.me(); why != "" && self.IsEmpty() && selfLID.IsEmpty() {
		return why + "; " + skipNoIdentity
	}
	return why
}

// addressed: the bot's JID (phone or LID) is mentioned, or the message
// quotes one of the bot's messages.
func (c *Channel) addressed(e *events.Message) bool {
	self, selfLID := c.me()
	isSelf := func(raw string) bool {
		j, err := types.ParseJID(raw)
		if err != nil {
			return false
		}
		j = userJID(j)
		return sameUser(j, self) || sameUser(j, selfLID)
	}
	for _, ci := range contextInfos(e.Message) {
		for _, m := range ci.GetMentionedJID() {
			if isSelf(m) {
				return true
			}
		}
		if p := ci.GetParticipant(); p != "" && ci.GetStanzaID() != "" && isSelf(p) {
			return true
		}
	}
	return false
}

// stripSelfMention takes "@<bot's number>" (how a mention reads in the
// text) out of what the model reads.
func (c *Channel) stripSelfMention(s string) string {
	self, selfLID := c.me()
	for _, j := range []types.JID{self, selfLID} {
		if j.User != "" {
			s = strings.ReplaceAll(strings.ReplaceAll(s, "@"+j.User+" ", ""), "@"+j.User, "")
		}
	}
	return strings.TrimSpace(s)
}

// senderID is who sent the message as allowFrom names them: the phone
// number's digits when WhatsApp gives or whatsmeow knows it, else the LID
// ("…@lid"). phone is the number, "" when unknown.
func (c *Channel) senderID(ctx context.Context, client waClient, src types.MessageSource) (id, phone string) {
	sender := userJID(src.Sender)
	if sender.IsEmpty() && !src.IsGroup {
		sender = userJID(src.Chat)
	}
	alt := userJID(src.SenderAlt)
	switch {
	case sender.Server == types.DefaultUserServer:
		if isLID(alt) {
			c.lids.learn(alt.User, sender.User)
		}
		return sender.User, sender.User
	case !isLID(sender):
		return sender.String(), ""
	case alt.Server == types.DefaultUserServer:
		c.lids.learn(sender.User, alt.User)
		return alt.User, alt.User
	}
	if p := c.lids.phone(sender.User); p != "" {
		return p, p
	}
	lctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if pn, err := client.PhoneForLID(lctx, sender); err == nil && !pn.IsEmpty() {
		c.lids.learn(sender.User, pn.User)
		return pn.User, pn.User
	}
	return sender.String(), ""
}

// markRead sends the read receipt (blue ticks), as nanobot does; best effort.
func (c *Channel) markRead(ctx context.Context, client waClient, src types.MessageSource, id string) {
	rctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := client.MarkRead(rctx, id, src.Chat, src.Sender); err != nil {
		c.Log.Debug("whatsapp read receipt not sent", "message_id", id, "error", err)
	}
}

func sentAt(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}
