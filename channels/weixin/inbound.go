package weixin

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// groupSuffix marks a group chat's id, as nanobot tells groups from DMs.
const groupSuffix = "@chatroom"

// handle takes one message in: decoded, de-duplicated, its context token
// kept for the reply, turned into an inbound message and published. The
// error is a publish that failed: the batch is polled again.
func (c *Channel) handle(ctx context.Context, raw json.RawMessage) error {
	m, err := decode(raw)
	id := messageKey(m)
	if err != nil {
		c.Log.Warn("weixin message dropped: cannot decode", "message_id", id, "error", err)
		return nil
	}
	if int(m.MessageType) == messageTypeBot {
		return nil // the bot's own message echoed back
	}
	if m.FromUserID == "" {
		c.Log.Warn("weixin message dropped: no sender", "message_id", id)
		return nil
	}
	if m.ContextToken != "" {
		c.mu.Lock()
		changed := c.acct.ContextTokens[m.FromUserID] != m.ContextToken
		at := time.Now()
		c.acct.ContextTokens[m.FromUserID] = m.ContextToken
		c.tokenAt[m.FromUserID] = at
		c.mu.Unlock()
		c.shareToken(m.FromUserID, m.ContextToken, at) // even unchanged: its age is news to the others
		if changed {
			c.saveAccount()
		}
	}
	content := c.content(m)
	media := downloadable(m)
	if content == "" && len(media) == 0 {
		c.Log.Debug("weixin message without content skipped", "message_id", id)
		return nil
	}
	msg := protocol.Inbound{
		ID:       "weixin:" + id,
		Route:    protocol.Route{Channel: Name, ChatID: m.FromUserID, SenderID: m.FromUserID, ReplyTo: id},
		Content:  content,
		Group:    strings.HasSuffix(m.FromUserID, groupSuffix),
		SentAt:   sentAt(m),
		Metadata: map[string]string{channels.MetaMessageID: id},
	}
	admitted := func(ctx context.Context, msg *protocol.Inbound) error {
		for i, it := range media {
			if path, err := c.download(ctx, it, id, i); err != nil {
				c.Log.Warn("weixin media not downloaded", "message_id", id, "kind", it.kind, "error", err)
			} else {
				msg.Media = append(msg.Media, path)
			}
		}
		return nil
	}
	// Claimed before it is handed over, so of two gateways polling one account one takes it.
	if err := c.TakeIn(ctx, id, msg, admitted); !channels.Handed(err) {
		return err // polled again, and taken then
	}
	return nil
}

// messageKey is nanobot's message id: message_id, else seq, else sender and time.
func messageKey(m message) string {
	switch {
	case m.MessageID != "":
		return string(m.MessageID)
	case m.Seq != "":
		return "seq:" + string(m.Seq)
	}
	return m.FromUserID + "_" + strconv.Itoa(int(m.CreateTimeMS))
}

// content is the text the agent reads, as nanobot writes it: texts (a
// quote as "[引用: …]"), voice transcripts, and a placeholder per medium.
func (c *Channel) content(m message) string {
	var parts []string
	for _, it := range m.ItemList {
		switch it.Type {
		case itemText:
			if it.TextItem == nil || it.TextItem.Text == "" {
				continue
			}
			parts = append(parts, quoted(it.RefMsg, it.TextItem.Text))
		case itemImage:
			parts = append(parts, "[image]")
		case itemVoice:
			if it.VoiceItem != nil && it.VoiceItem.Text != "" {
				parts = append(parts, "[voice] "+it.VoiceItem.Text)
			} else {
				parts = append(parts, "[voice]")
			}
		case itemFile:
			name := "unknown"
			if it.FileItem != nil && it.FileItem.FileName != "" {
				name = it.FileItem.FileName
			}
			parts = append(parts, "[file: "+name+"]")
		case itemVideo:
			parts = append(parts, "[video]")
		}
	}
	return strings.Join(parts, "\n")
}

// quoted prefixes a text with the message it quotes (a quoted medium adds nothing).
func quoted(ref *refMsg, text string) string {
	if ref == nil {
		return text
	}
	var q []string
	if ref.MessageItem != nil && ref.MessageItem.Type != itemText && ref.MessageItem.Type != 0 {
		return text
	}
	if ref.Title != "" {
		q = append(q, ref.Title)
	}
	if ref.MessageItem != nil && ref.MessageItem.TextItem != nil && ref.MessageItem.TextItem.Text != "" {
		q = append(q, ref.MessageItem.TextItem.Text)
	}
	if len(q) == 0 {
		return text
	}
	return "[引用: " + strings.Join(q, " | ") + "]\n" + text
}

func sentAt(m message) time.Time {
	if m.CreateTimeMS > 0 {
		return time.UnixMilli(int64(m.CreateTimeMS))
	}
	return time.Now()
}
