package telegram

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// startText is nanobot's /start greeting.
const startText = "👋 Hi %s! I'm nanobot.\n\nSend me a message and I'll respond!\nType /help to see available commands."

// onUpdate handles one update from getUpdates.
func (c *Channel) onUpdate(ctx context.Context, _ *bot.Bot, upd *models.Update) {
	if upd == nil {
		return
	}
	// A server that ignores offset, or a restart, sends updates again.
	key := strconv.FormatInt(upd.ID, 10)
	if upd.CallbackQuery != nil {
		if !c.Seen().Has(key) {
			c.onPress(ctx, upd.CallbackQuery)
			c.Seen().Add(key)
		}
		return
	}
	c.handle(ctx, key, upd)
}

func (c *Channel) handle(ctx context.Context, key string, upd *models.Update) {
	msg := upd.Message
	if msg == nil || msg.From == nil || (c.me != nil && msg.From.ID == c.me.ID) {
		return
	}
	in, ok := c.inbound(msg)
	if !ok {
		return
	}
	att, hasFile := attachmentOf(msg)
	if strings.TrimSpace(in.Content) == "" && !hasFile {
		return // a sticker, a poll, a service message: nothing to answer
	}
	text := in.Content
	if text == "" {
		in.Content = "[" + att.kind + "]" // still a message: a stranger gets the pairing code
	}
	// Only for a sender the manager let in: the greeting, the downloads.
	admitted := func(ctx context.Context, in *protocol.Inbound) error {
		if name, _, isCmd := protocol.ParseCommand(in.Content); isCmd && name == "/start" {
			c.greet(ctx, *in, msg.From)
			return channels.ErrHandled
		}
		if hasFile {
			in.Content = text
			channels.TakeFiles(ctx, in, []attachment{att}, c.take(msg.Chat.ID))
		}
		return nil
	}
	// Telegram will not send it again once the offset moved on: retried a while.
	_ = c.TakeInPatiently(ctx, key, in, admitted, channels.PublishPatience)
}

// inbound builds the agent's message from a Telegram message, or reports
// that the message is not for the bot (a group message that does not
// mention it, a command for another bot).
func (c *Channel) inbound(msg *models.Message) (protocol.Inbound, bool) {
	group := msg.Chat.Type == models.ChatTypeGroup || msg.Chat.Type == models.ChatTypeSupergroup
	text := msg.Text
	if text == "" {
		text = msg.Caption
	}
	username := ""
	if c.me != nil {
		username = c.me.Username
	}
	if to := commandTarget(text); to != "" && !strings.EqualFold(to, username) {
		return protocol.Inbound{}, false // /cmd@otherbot
	}
	_, _, isCmd := protocol.ParseCommand(text)
	addressed := func() bool { return isCmd || mentioned(msg, c.me) } // commands need no mention
	if group && channels.GroupGateOf(Name, c.cfg.GroupPolicy, nil).Skip(strconv.FormatInt(msg.Chat.ID, 10), addressed) != "" {
		return protocol.Inbound{}, false
	}
	route := protocol.Route{
		Channel:  Name,
		ChatID:   strconv.FormatInt(msg.Chat.ID, 10),
		SenderID: SenderID(msg.From),
	}
	if msg.IsTopicMessage && msg.MessageThreadID != 0 {
		route.ThreadID = strconv.Itoa(msg.MessageThreadID)
	}
	if c.cfg.ReplyToMessage {
		route.ReplyTo = strconv.Itoa(msg.ID)
	}
	sent := time.Now()
	if msg.Date > 0 {
		sent = time.Unix(int64(msg.Date), 0)
	}
	return protocol.Inbound{
		ID:      fmt.Sprintf("telegram-%d-%d", msg.Chat.ID, msg.ID),
		Route:   route,
		Scope:   topicScope(route),
		Content: StripMention(text, username),
		Group:   group,
		SentAt:  sent,
		Metadata: map[string]string{
			"message_id": strconv.Itoa(msg.ID),
			"username":   msg.From.Username,
			"first_name": msg.From.FirstName,
		},
	}, true
}

// topicScope is nanobot's per-topic session: a message in a topic (a
// forum's, or a private chat's) is answered there and has its own session.
func topicScope(route protocol.Route) *protocol.Scope {
	if route.ThreadID == "" {
		return nil
	}
	return protocol.Topic(route.ThreadID)
}

// SenderID is how nanobot names a Telegram sender: "id|username", or the
// id alone for users without a username.
func SenderID(u *models.User) string {
	if u == nil {
		return ""
	}
	id := strconv.FormatInt(u.ID, 10)
	if u.Username != "" {
		return id + "|" + u.Username
	}
	return id
}

// mentioned reports whether a group message is addressed to the bot: an
// @mention of its username, a text mention of its user, or a reply to one
// of its messages.
func mentioned(msg *models.Message, me *models.User) bool {
	if me == nil {
		return false
	}
	if r := msg.ReplyToMessage; r != nil && r.From != nil && r.From.ID == me.ID {
		return true
	}
	entities := msg.Entities
	text := msg.Text
	if text == "" {
		entities, text = msg.CaptionEntities, msg.Caption
	}
	for _, e := range entities {
		if e.Type == models.MessageEntityTypeTextMention && e.User != nil && e.User.ID == me.ID {
			return true
		}
	}
	return me.Username != "" && mentionRe(me.Username).MatchString(text)
}

var mentionRes sync.Map // username → *regexp.Regexp

// mentionRe matches @username as a whole word, in any case.
func mentionRe(username string) *regexp.Regexp {
	if re, ok := mentionRes.Load(username); ok {
		return re.(*regexp.Regexp)
	}
	re := regexp.MustCompile(`(?i)(^|[^\w/])@` + regexp.QuoteMeta(username) + `\b`)
	mentionRes.Store(username, re)
	return re
}

// StripMention removes @username from a message's text, so the model reads
// what was said to it ("@bot what's up" → "what's up").
func StripMention(text, username string) string {
	if username == "" {
		return strings.TrimSpace(text)
	}
	re := mentionRe(username)
	if !re.MatchString(text) {
		return strings.TrimSpace(text)
	}
	out := re.ReplaceAllString(text, "$1")
	return strings.TrimSpace(spaceRun.ReplaceAllString(out, " ")) // close the gap the mention left
}

var spaceRun = regexp.MustCompile(`[ \t]{2,}`)

// commandTarget is the bot a command names ("/help@nanobot" → "nanobot").
func commandTarget(text string) string {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "/") {
		return ""
	}
	head, _, _ := strings.Cut(t, " ")
	head, _, _ = strings.Cut(head, "\n")
	_, to, _ := strings.Cut(head, "@")
	return to
}

// greet answers /start without the model.
func (c *Channel) greet(ctx context.Context, in protocol.Inbound, from *models.User) {
	name := from.FirstName
	if name == "" {
		name = from.Username
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if _, err := c.sendText(cctx, in.Route, fmt.Sprintf(startText, name), false, nil); err != nil {
		c.Log.Warn("telegram /start greeting not sent", "chat", in.Route.ChatID, "error", err)
	}
}
