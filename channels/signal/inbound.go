package signal

import (
	"cmp"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// envelope is the part of a received message the channel reads.
type envelope struct {
	Source       string       `json:"source"`
	SourceNumber string       `json:"sourceNumber"`
	SourceUUID   string       `json:"sourceUuid"`
	SourceName   string       `json:"sourceName"`
	Timestamp    int64        `json:"timestamp"`
	DataMessage  *dataMessage `json:"dataMessage"`
}

type dataMessage struct {
	Message     string          `json:"message"`
	GroupInfo   *groupRef       `json:"groupInfo"`
	GroupV2     *groupRef       `json:"groupV2"`
	Mentions    []mention       `json:"mentions"`
	Attachments []attachment    `json:"attachments"`
	Reaction    json.RawMessage `json:"reaction"`
}

type groupRef struct {
	GroupID string `json:"groupId"`
	ID      string `json:"id"`
}

type attachment struct {
	ID          string `json:"id"`
	ContentType string `json:"contentType"`
	Filename    string `json:"filename"`
}

// senderIDs are the sender's ids, number first: nanobot's "number|uuid".
func (e envelope) senderIDs() []string {
	return channels.Distinct(e.SourceNumber, e.Source, e.SourceUUID)
}

// group is the message's group id, "" in a direct message.
func (d *dataMessage) group() string {
	for _, g := range []*groupRef{d.GroupInfo, d.GroupV2} {
		if g != nil && cmp.Or(g.GroupID, g.ID) != "" {
			return cmp.Or(g.GroupID, g.ID)
		}
	}
	return ""
}

// handle takes one event of the stream in. A payload it cannot read is
// logged with its id and dropped; an error means the agent did not take
// the message before ctx ended.
func (c *Channel) handle(ctx context.Context, eventID, data string) error {
	var ev struct {
		Envelope *envelope `json:"envelope"`
	}
	if err := json.Unmarshal([]byte(data), &ev); err != nil {
		c.Log.Warn("signal event dropped: not JSON", "event_id", eventID, "error", err)
		return nil
	}
	env := ev.Envelope
	if env == nil || env.DataMessage == nil || env.DataMessage.Reaction != nil {
		return nil // receipts, typing, sync and reactions: nothing to answer
	}
	ids := env.senderIDs()
	switch {
	case len(ids) == 0 || env.Timestamp <= 0:
		c.Log.Warn("signal message dropped: no sender or timestamp", "event_id", eventID)
		return nil
	case c.self.any(ids):
		c.self.learn(ids) // the account itself: its uuid, for mentions
		return nil
	case env.DataMessage.Message == "" && len(env.DataMessage.Attachments) == 0:
		return nil
	}
	// A message is named by its sender and timestamp: the daemon sends all
	// it kept after an unknown Last-Event-ID, and it is taken in once.
	key := ids[0] + ":" + strconv.FormatInt(env.Timestamp, 10)
	if c.Seen().Has(key) {
		c.Log.Info("signal message sent again; already taken in", "event_id", eventID, "key", key)
		return nil
	}
	return c.take(ctx, env, ids, key)
}

// take applies nanobot's dm and group policies and hands the message to
// the manager (TakeIn), which checks allowFrom and pairing.
func (c *Channel) take(ctx context.Context, env *envelope, ids []string, key string) error {
	dm := env.DataMessage
	number := primaryID(ids)
	ts := strconv.FormatInt(env.Timestamp, 10)
	group := dm.group()
	name := cmp.Or(env.SourceName, number)
	text := dm.Message
	chat := number
	if group != "" {
		chat = group
		if why := c.groupSkip(group, name, text, dm.Mentions); why != "" {
			c.Log.Debug("signal group message not answered", "group", group, "why", why, "message", ts)
			return nil
		}
		text = c.groups.Context(group) + "[" + name + "]: " + c.self.stripMentions(text, dm.Mentions)
	} else if why := c.cfg.DM.Skip(Name); why != "" {
		c.Log.Debug("signal direct message not answered", "why", why, "sender", number)
		return nil
	}
	msg := protocol.Inbound{
		ID:      "signal:" + number + ":" + ts,
		Route:   protocol.Route{Channel: Name, ChatID: chat, SenderID: strings.Join(ids, "|"), ReplyTo: ts},
		Content: strings.TrimSpace(text), Group: group != "", SentAt: time.UnixMilli(env.Timestamp),
		Metadata: map[string]string{channels.MetaMessageID: ts, "sender_name": name, "sender_number": number},
	}
	if group != "" {
		msg.Metadata["group_id"] = group
	}
	admitted := func(_ context.Context, msg *protocol.Inbound) error {
		c.takeFiles(dm.Attachments, msg)
		if msg.Content == "" {
			msg.Content = channels.EmptyMessage
		}
		return nil
	}
	return c.TakeInPatiently(ctx, key, msg, admitted, untilStopped)
}

// groupSkip is nanobot's group policy: why a group message is left alone,
// "" to answer it. A message that passes the group gates joins the group's
// context buffer even when it is not answered.
func (c *Channel) groupSkip(group, name, text string, mentions []mention) string {
	gate := c.cfg.Group.gate()
	if !c.cfg.Group.Enabled {
		return "groups are off (channels.signal.group.enabled)"
	} else if why := gate.SkipChat(group); why != "" {
		return why
	}
	c.groups.Add(group, name, text)
	return gate.SkipUnaddressed(func() bool {
		_, _, command := protocol.ParseCommand(text) // commands need no mention
		return command || c.self.mentioned(text, mentions)
	})
}

// primaryID is the id a direct chat is named by: a phone number if any.
func primaryID(ids []string) string {
	for _, id := range ids {
		if isNumber(id) {
			return id
		}
	}
	return ids[0]
}
