package teams

import (
	"context"
	"encoding/json"
	"html"
	"net/url"
	"regexp"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/internal/hostcheck"
	"github.com/nanobot-durable/nanobot/protocol"
)

// activity is the part of a Bot Framework activity the channel reads.
type activity struct {
	Type         string  `json:"type"`
	ID           string  `json:"id"`
	Timestamp    string  `json:"timestamp"`
	ServiceURL   string  `json:"serviceUrl"`
	From         account `json:"from"`
	Recipient    account `json:"recipient"`
	Conversation struct {
		ID               string `json:"id"`
		ConversationType string `json:"conversationType"` // personal, groupChat, channel
	} `json:"conversation"`
	Text      string `json:"text"`
	ReplyToID string `json:"replyToId"`
	Entities  []struct {
		Type      string  `json:"type"`
		Mentioned account `json:"mentioned"`
	} `json:"entities"`
	Value json.RawMessage `json:"value"`
}

type account struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	AADObjectID string `json:"aadObjectId"`
}

// sender is who wrote, as allowFrom names them: the AAD object id, as in nanobot.
func (a activity) sender() string {
	if a.From.AADObjectID != "" {
		return a.From.AADObjectID
	}
	return a.From.ID
}

func (a activity) group() bool {
	t := a.Conversation.ConversationType
	return t != "" && t != "personal"
}

// mentionsBot: an entity mentions the activity's recipient, the bot.
func (a activity) mentionsBot() bool {
	for _, e := range a.Entities {
		if e.Type == "mention" && e.Mentioned.ID != "" && e.Mentioned.ID == a.Recipient.ID {
			return true
		}
	}
	return false
}

// press is the approval command a card's Action.Submit sends back as the
// message's value ("": none).
func (a activity) press() string {
	var v struct {
		Command string `json:"nanobot"`
	}
	if len(a.Value) == 0 || json.Unmarshal(a.Value, &v) != nil {
		return ""
	}
	return v.Command
}

// atMention is Teams' markup of a mention in the text.
var atMention = regexp.MustCompile(`(?is)<at\b[^>]*>.*?</at>`)

// plainText is what the user wrote: mentions out, HTML entities decoded.
func plainText(text string) string {
	text = atMention.ReplaceAllString(text, " ")
	return strings.TrimSpace(strings.ReplaceAll(html.UnescapeString(text), "\u00a0", " "))
}

// take handles one activity whose token held; the error says the agent did not take it.
func (c *Channel) take(ctx context.Context, a activity) error {
	switch {
	case a.ID == "" || a.Conversation.ID == "" || a.From.ID == "":
		c.Log.Warn("msteams activity dropped: no id, conversation or sender", "activity_id", a.ID, "type", a.Type)
		return nil
	case !c.trusted(a.ServiceURL):
		c.Log.Warn("msteams activity dropped: its serviceUrl is not in channels.msteams.trustedServiceUrlHosts", "activity_id", a.ID, "service_url", a.ServiceURL)
		return nil
	case a.Type != "message" || a.From.ID == a.Recipient.ID:
		c.Log.Debug("msteams activity ignored: not a message to the bot", "activity_id", a.ID, "type", a.Type)
		return nil
	case a.press() != "":
		return c.takePress(ctx, a, a.press())
	case a.group() && channels.GroupGateOf(Name, c.cfg.GroupPolicy, nil).Skip(a.Conversation.ID, a.mentionsBot) != "":
		c.Log.Debug("msteams message not for the bot (groupPolicy mention)", "activity_id", a.ID, "conversation", a.Conversation.ID)
		return nil
	}
	text := plainText(a.Text)
	if text == "" {
		text = strings.TrimSpace(c.cfg.MentionOnlyResponse) // a bare mention, as nanobot
	}
	if text == "" {
		return nil
	}
	msg := c.inbound(a, text)
	msg.Metadata = map[string]string{channels.MetaMessageID: a.ID, "from_name": a.From.Name}
	return c.TakeIn(ctx, a.Conversation.ID+"/"+a.ID, msg, nil)
}

// inbound is the message of an activity: the chat is the conversation (a
// channel thread's id names its root, so the reply lands in the thread,
// which has a session of its own).
func (c *Channel) inbound(a activity, text string) protocol.Inbound {
	if err := c.convs.Put(a.Conversation.ID, a.ServiceURL); err != nil {
		c.Log.Warn("msteams conversation not saved: a restart forgets where to answer it", "conversation", a.Conversation.ID, "error", err)
	}
	msg := protocol.Inbound{
		ID:      "msteams:" + a.ID,
		Route:   protocol.Route{Channel: Name, ChatID: a.Conversation.ID, SenderID: a.sender(), ReplyTo: a.ID},
		Content: text, Group: a.group(), SentAt: channels.SentAt(a.Timestamp),
	}
	if base, root, ok := strings.Cut(a.Conversation.ID, ";messageid="); ok {
		msg.Scope = protocol.Thread(base, root)
	}
	return msg
}

// takePress turns an approval card's button into the presser's message,
// through the manager's gate like a typed one; the card loses its buttons
// once the answer went in.
func (c *Channel) takePress(ctx context.Context, a activity, cmd string) error {
	if !channels.IsApprovalPress(cmd) {
		c.Log.Warn("msteams card answer ignored: not an approval button", "activity_id", a.ID, "value", cmd)
		return nil
	}
	msg := c.inbound(a, cmd)
	msg.ID, msg.Route.ReplyTo = "msteams-press:"+a.ID, a.ReplyToID
	msg.Metadata = map[string]string{"request_message_id": a.ReplyToID, "button": "approval"}
	return c.TakePress(ctx, a.Conversation.ID+"/"+a.ID, msg, func() {
		if a.ReplyToID == "" {
			return
		}
		card := map[string]any{"type": "message", "id": a.ReplyToID, "text": "Answered by " + a.From.Name + ": " + cmd}
		if _, err := c.post(context.WithoutCancel(ctx), msg.Route, a.ReplyToID, card); err != nil {
			c.Log.Warn("msteams could not take the buttons off an answered request", "activity_id", a.ReplyToID, "error", err)
		}
	})
}

// trusted: replies to serviceURL may carry the bot's token. HTTPS to a
// host of trustedServiceUrlHosts, or plain HTTP to a loopback one (a local
// emulator) that the list names.
func (c *Channel) trusted(serviceURL string) bool {
	u, err := url.Parse(strings.TrimSpace(serviceURL))
	if err != nil || (u.Scheme != "https" && !(u.Scheme == "http" && hostcheck.Loopback(u.Hostname()))) {
		return false
	}
	return hostcheck.Matches(u.Hostname(), c.cfg.TrustedServiceURLHosts)
}
