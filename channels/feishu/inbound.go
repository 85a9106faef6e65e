package feishu

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// queued is a message event waiting for the handler, and the ack its
// frame wants once the agent took it in.
type queued struct {
	payload []byte
	ack     func()
}

// takeEvent sees every event the long connection delivers, in its read
// loop: a message is queued, to be acked once it is taken in (an event
// the agent did not get stays unacked, so Feishu delivers it again); any
// other event is acked at once.
func (c *Channel) takeEvent(frameID string, payload []byte, ack func()) {
	payload, err := decryptEvent(payload, c.cfg.EncryptKey)
	var env eventEnvelope
	if err == nil {
		if err = json.Unmarshal(payload, &env); err != nil {
			err = fmt.Errorf("not JSON: %w", err)
		}
	}
	switch {
	case err != nil:
		c.Log.Warn("feishu event dropped", "message_id", frameID, "error", err)
	case env.Header.EventType != eventMessageReceive:
		c.Log.Debug("feishu event ignored", "type", env.Header.EventType, "event_id", env.Header.EventID)
	default:
		c.events.Push(queued{payload, ack})
		return
	}
	ack()
}

// takeQueued takes a queued message in and acks its frame once the agent has it.
func (c *Channel) takeQueued(ctx context.Context, q queued) {
	if channels.Handed(c.handle(ctx, q.payload)) {
		q.ack()
	}
}

// handle takes one message in: checked, de-duplicated, filtered by
// nanobot's rules, turned into an inbound message and published. The
// error is TakeIn's.
func (c *Channel) handle(ctx context.Context, raw []byte) error {
	m, id, err := decodeMessageEvent(raw)
	if err != nil {
		c.Log.Warn("feishu message dropped", "message_id", id, "error", err)
		return nil
	}
	msg := m.Message
	if m.Sender.SenderType == "bot" {
		return nil
	}
	if msg.ChatType == chatGroup {
		if why := channels.GroupGateOf(Name, c.cfg.GroupPolicy, nil).Skip(msg.ChatID, func() bool { return c.mentioned(m) }); why != "" {
			c.Log.Debug("feishu group message skipped", "why", why, "message_id", msg.MessageID, "chat_id", msg.ChatID)
			return nil
		}
	}
	content, keys := c.content(m)
	if strings.TrimSpace(content) == "" && len(keys) == 0 {
		c.Log.Debug("feishu message skipped: nothing in it", "message_id", msg.MessageID, "type", msg.MessageType)
		return nil
	}
	in := c.inbound(m, content)
	admitted := func(ctx context.Context, in *protocol.Inbound) error {
		if msg.ParentID != "" {
			if quoted := c.replyContext(ctx, msg.ParentID); quoted != "" {
				in.Content = quoted + "\n" + in.Content
			}
		}
		var notes []string
		for _, k := range keys {
			path, note := c.download(ctx, msg.MessageID, k)
			if path != "" {
				in.Media = append(in.Media, path)
			}
			notes = append(notes, note)
		}
		in.Content = channels.WithNotes(in.Content, notes)
		return nil
	}
	// Feishu delivers an unacked event again (after a reconnect too): taken in once.
	return c.TakeIn(ctx, "message:"+msg.MessageID, in, admitted)
}

// inbound is the message the agent gets: a p2p chat is the sender's
// open_id (as in nanobot), a group its chat_id.
func (c *Channel) inbound(m messageEvent, content string) protocol.Inbound {
	msg := m.Message
	sender := m.Sender.SenderID.OpenID
	chat := sender
	if msg.ChatType == chatGroup {
		chat = msg.ChatID
	}
	meta := map[string]string{channels.MetaMessageID: msg.MessageID, "chat_type": msg.ChatType, "msg_type": msg.MessageType}
	for k, v := range map[string]string{"parent_id": msg.ParentID, "root_id": msg.RootID, "thread_id": msg.ThreadID} {
		if v != "" {
			meta[k] = v
		}
	}
	// A topic is answered by replying to its root message: the route's
	// thread is that root, so progress that answers nobody lands in it too.
	thread := msg.ThreadID
	if thread != "" && msg.RootID != "" {
		thread = msg.RootID
	}
	return protocol.Inbound{
		ID:      "feishu:" + msg.MessageID,
		Route:   protocol.Route{Channel: Name, ChatID: chat, SenderID: sender, ReplyTo: msg.MessageID, ThreadID: thread},
		Content: content, Group: msg.ChatType == chatGroup, SentAt: sentAt(msg.CreateTime), Metadata: meta,
		Scope: c.scope(m),
	}
}

// scope is nanobot's session override for Feishu: with topicIsolation each
// group topic (its root, or a message starting one) is a session; without
// it a group is one session, kept under unifiedSession too; p2p has none.
func (c *Channel) scope(m messageEvent) *protocol.Scope {
	msg := m.Message
	switch {
	case msg.ChatType != chatGroup:
		return nil
	case !c.cfg.TopicIsolation:
		return protocol.OwnChat()
	case msg.RootID != "":
		return protocol.Within(msg.RootID)
	}
	return protocol.Within(msg.MessageID)
}

// mentioned: @all, or a mention of the bot's open_id (without it,
// nanobot's guess: an open_id mention without a user_id is a bot).
func (c *Channel) mentioned(m messageEvent) bool {
	if strings.Contains(m.Message.Content, "@_all") {
		return true
	}
	for _, mn := range m.Message.Mentions {
		if c.isBot(mn) {
			return true
		}
	}
	return false
}

func (c *Channel) isBot(mn mention) bool {
	if bot := c.BotID(); bot != "" {
		return mn.ID.OpenID == bot
	}
	return mn.ID.UserID == "" && strings.HasPrefix(mn.ID.OpenID, "ou_")
}

// placeholder matches a mention key not followed by more of a key (@_user_1, not @_user_10).
func placeholder(key string) *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(key) + `([^A-Za-z0-9_]|$)`)
}

// text is a text message as the model reads it: a leading mention of the
// bot dropped (so "/new" still routes), other mentions spelt out.
func (c *Channel) text(s string, mentions []mention) string {
	trimmed := strings.TrimLeft(s, " \t\n")
	for _, mn := range mentions {
		if mn.Key == "" || !c.isBot(mn) {
			continue
		}
		if loc := placeholder(mn.Key).FindStringIndex(trimmed); loc != nil && loc[0] == 0 {
			if rest := strings.TrimSpace(trimmed[len(mn.Key):]); rest != "" {
				s = rest
			}
			break
		}
	}
	for _, mn := range mentions {
		if mn.Key == "" {
			continue
		}
		name := mn.Name
		if name == "" {
			name = mn.Key
		}
		repl := "@" + name
		switch {
		case mn.ID.OpenID != "" && mn.ID.UserID != "":
			repl = "@" + name + " (" + mn.ID.OpenID + ", user id: " + mn.ID.UserID + ")"
		case mn.ID.OpenID != "":
			repl = "@" + name + " (" + mn.ID.OpenID + ")"
		}
		s = placeholder(mn.Key).ReplaceAllStringFunc(s, func(hit string) string {
			return repl + hit[len(mn.Key):]
		})
	}
	return s
}

func sentAt(ms string) time.Time {
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || n <= 0 {
		return time.Now()
	}
	return time.UnixMilli(n)
}
