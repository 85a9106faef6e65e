package discord

import (
	"slices"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
)

// Why a message is not taken in (logged at debug: a channel's usual traffic).
const (
	skipOwn        = "the bot's own message"
	skipBot        = "from another bot or a webhook"
	skipSystem     = "a system message (thread created, pin, join…)"
	skipChannel    = "channel not in allowChannels"
	skipNoIdentity = "the bot's identity is not known yet"
)

// skipReason tells why a message is left alone, "" to take it. parent is
// the thread's parent channel ("" outside threads). Who may talk is the
// manager's business (allowFrom, pairing), not this.
func (c *Channel) skipReason(m message, botID, parent string) string {
	switch {
	case botID != "" && m.Author.ID == botID:
		return skipOwn
	case m.Author.Bot || m.WebhookID != "":
		return skipBot
	case m.Type != typeDefault && m.Type != typeReply:
		return skipSystem
	case !c.channelAllowed(m.ChannelID, parent):
		return skipChannel
	case m.isDM():
		return ""
	}
	why := channels.GroupGateOf(Name, c.cfg.GroupPolicy, nil).Skip(m.ChannelID, func() bool { return botID != "" && addressesBot(m, botID) })
	if why != "" && botID == "" {
		return why + "; " + skipNoIdentity
	}
	return why
}

// channelAllowed: allowChannels empty, or naming the channel or a thread's parent.
func (c *Channel) channelAllowed(channelID, parent string) bool {
	if len(c.cfg.AllowChannels) == 0 {
		return true
	}
	return slices.Contains(c.cfg.AllowChannels, channelID) || (parent != "" && slices.Contains(c.cfg.AllowChannels, parent))
}

// addressesBot: the bot is @-mentioned, or the message replies to one of its messages.
func addressesBot(m message, botID string) bool {
	for _, u := range m.Mentions {
		if u.ID == botID {
			return true
		}
	}
	if strings.Contains(m.Content, "<@"+botID+">") || strings.Contains(m.Content, "<@!"+botID+">") {
		return true
	}
	r := m.ReferencedMessage
	return r != nil && r.Author != nil && r.Author.ID == botID
}

// stripMention takes the bot's mentions out of the text the model reads.
func stripMention(text, botID string) string {
	if botID != "" {
		for _, m := range []string{"<@" + botID + ">", "<@!" + botID + ">"} {
			text = strings.ReplaceAll(strings.ReplaceAll(text, m+" ", ""), m, "")
		}
	}
	return strings.TrimSpace(text)
}
