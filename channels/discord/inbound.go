package discord

import (
	"context"

	"github.com/bwmarrin/discordgo"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// handle takes one MESSAGE_CREATE in: checked, de-duplicated, filtered by
// nanobot's rules, turned into an inbound message and published.
func (c *Channel) handle(ctx context.Context, raw []byte) {
	m, id, err := decodeMessage(raw)
	if err != nil {
		c.Log.Warn("discord message dropped", "message_id", id, "error", err)
		return
	}
	botID := c.BotID()
	parent := ""
	if !m.isDM() {
		parent = c.threadParent(m.ChannelID)
	}
	if why := c.skipReason(m, botID, parent); why != "" {
		c.Log.Debug("discord message skipped", "why", why, "message_id", m.ID, "channel_id", m.ChannelID, "author", m.Author.ID)
		return
	}
	msg := c.inbound(m, botID, parent)
	admitted := func(ctx context.Context, msg *protocol.Inbound) error {
		channels.TakeFiles(ctx, msg, m.Attachments, func(ctx context.Context, a attachment) (string, string) {
			return c.take(ctx, m.ID, a)
		})
		return nil
	}
	// A resumed session replays what it missed; a message is taken in once.
	_ = c.TakeInPatiently(ctx, "message:"+m.ID, msg, admitted, channels.PublishPatience) // Discord never sends a message event again: offered until Temporal takes it
}

// inbound is the message the agent gets: the chat is the Discord channel
// (a thread is its own channel, so the answer lands in it) and a thread has
// a session of its own.
func (c *Channel) inbound(m message, botID, parent string) protocol.Inbound {
	content := stripMention(m.Content, botID)
	if content == "" && len(m.Attachments) == 0 {
		content = channels.EmptyMessage
	}
	meta := map[string]string{channels.MetaMessageID: m.ID}
	if m.GuildID != "" {
		meta["guild_id"] = m.GuildID
	}
	if r := m.MessageReference; r != nil && r.MessageID != "" {
		meta["reply_to"] = r.MessageID
	}
	msg := protocol.Inbound{
		ID: "discord:" + m.ID,
		Route: protocol.Route{
			Channel: Name, ChatID: m.ChannelID, SenderID: m.Author.ID, ReplyTo: m.ID,
		},
		Content: content, Group: !m.isDM(), SentAt: channels.SentAt(m.Timestamp), Metadata: meta,
	}
	if parent != "" {
		meta["parent_channel_id"], meta["thread_id"] = parent, m.ChannelID
		msg.Scope = protocol.Thread(parent, m.ChannelID) // nanobot: a thread is a session of its own
	}
	return msg
}

// threadParent is the parent channel of a thread, "" for any other
// channel: from the gateway's state (GUILD_CREATE, THREAD_CREATE), else
// asked of the REST API once and remembered.
func (c *Channel) threadParent(channelID string) string {
	ch, err := c.api.State.Channel(channelID)
	if err != nil {
		ctx, cancel := c.Call(callTimeout)
		ch, err = c.api.Channel(channelID, discordgo.WithContext(ctx))
		cancel()
		if err != nil {
			c.Log.Warn("discord channel not found; taking it as a plain channel", "channel_id", channelID, "error", err)
			return ""
		}
		_ = c.api.State.ChannelAdd(ch) // fails only for a guild not in the state yet
	}
	if ch.IsThread() {
		return ch.ParentID
	}
	return ""
}
