package qq

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/botgateway"
	"github.com/nanobot-durable/nanobot/protocol"
)

// message is a C2C_MESSAGE_CREATE or GROUP_AT_MESSAGE_CREATE's d.
type message struct {
	ID          string `json:"id"`
	Content     string `json:"content"`
	Timestamp   string `json:"timestamp"`
	GroupOpenID string `json:"group_openid"`
	Author      struct {
		ID           string `json:"id"`
		UserOpenID   string `json:"user_openid"`
		MemberOpenID string `json:"member_openid"`
	} `json:"author"`
	Attachments []attachment `json:"attachments"`
}

// attachment is a file the user sent (an image, a file), served by QQ's CDN.
type attachment struct {
	ContentType string `json:"content_type"`
	Filename    string `json:"filename"`
	URL         string `json:"url"`
}

// maxContent bounds the text taken in from one message.
const maxContent = 16000

// decodeMessage reads a message dispatch; its id ("?" if it has none) is
// for the log line of a payload that is dropped.
func decodeMessage(kind string, raw json.RawMessage) (m message, chat, sender string, err error) {
	var probe struct {
		ID any `json:"id"`
	}
	_ = json.Unmarshal(raw, &probe)
	m.ID = "?"
	if probe.ID != nil {
		m.ID = fmt.Sprint(probe.ID)
	}
	var got message
	if err := json.Unmarshal(raw, &got); err != nil {
		return m, "", "", fmt.Errorf("bad %s payload: %w", kind, err)
	}
	if got.ID == "" {
		return m, "", "", fmt.Errorf("bad %s payload: no id", kind)
	}
	m = got
	if kind == eventGroupMessage {
		chat, sender = m.GroupOpenID, m.Author.MemberOpenID
	} else {
		sender = m.Author.UserOpenID
		if sender == "" {
			sender = m.Author.ID
		}
		chat = sender
	}
	switch {
	case chat == "" || sender == "":
		return m, "", "", fmt.Errorf("bad %s payload: no chat or author openid", kind)
	case !validID(chat) || !validID(sender):
		return m, "", "", fmt.Errorf("bad %s payload: openid %q/%q is not an openid", kind, chat, sender)
	case len([]rune(m.Content)) > maxContent:
		return m, "", "", fmt.Errorf("bad %s payload: content of %d characters", kind, len([]rune(m.Content)))
	}
	return m, chat, sender, nil
}

// validID: an openid or message id fits in a URL path as it is.
func validID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.", r)) {
			return false
		}
	}
	return true
}

// handle takes one message in: checked, de-duplicated, turned into an
// inbound message and published; its files are fetched and the ack sent
// only once the manager admitted the sender.
func (c *Channel) handle(ctx context.Context, e botgateway.Dispatch) {
	m, chat, sender, err := decodeMessage(e.Type, e.Data)
	if err != nil {
		c.Log.Warn("qq message dropped", "message_id", m.ID, "seq", e.Seq, "error", err)
		return
	}
	group := e.Type == eventGroupMessage
	if group {
		c.groups.Add(chat)
	}
	content := strings.TrimSpace(m.Content)
	if content == "" && len(m.Attachments) == 0 {
		c.Log.Debug("qq message empty; skipped", "message_id", m.ID)
		return
	}
	msg := protocol.Inbound{
		ID:       "qq:" + m.ID,
		Route:    protocol.Route{Channel: Name, ChatID: chat, SenderID: sender, ReplyTo: m.ID},
		Content:  content,
		Group:    group,
		SentAt:   channels.SentAt(m.Timestamp),
		Metadata: map[string]string{channels.MetaMessageID: m.ID},
	}
	admitted := func(ctx context.Context, msg *protocol.Inbound) error {
		c.takeFiles(ctx, m, msg)
		c.ack(ctx, msg.Route)
		return nil
	}
	_ = c.TakeInPatiently(ctx, "message:"+m.ID, msg, admitted, channels.PublishPatience) // QQ never sends a dispatch again: offered until Temporal takes it
}

// takeFiles downloads the message's attachments and lists them in its
// text as nanobot does ("Received files:" with the saved paths).
func (c *Channel) takeFiles(ctx context.Context, m message, msg *protocol.Inbound) {
	if len(m.Attachments) == 0 {
		return
	}
	var lines []string
	image := false
	for i, a := range m.Attachments {
		shown := a.Filename
		path, err := c.download(ctx, m.ID, i, a)
		if err != nil {
			c.Log.Warn("qq attachment not downloaded", "message_id", m.ID, "attachment", i, "error", err)
			lines = append(lines, "- "+cmp.Or(shown, channels.RedactURL(a.URL))+"\n  saved: [download failed]")
			continue
		}
		msg.Media = append(msg.Media, path)
		image = image || isImage(path)
		lines = append(lines, "- "+cmp.Or(shown, baseName(path))+"\n  saved: "+path)
	}
	block := "Received files:\n" + strings.Join(lines, "\n")
	switch {
	case msg.Content != "":
		msg.Content += "\n\n" + block
	case image:
		msg.Content = "[Image]\n" + block
	default:
		msg.Content = "[File]\n" + block
	}
}

// ack is nanobot's ackMessage, a passive reply sent at once; failing it
// fails nothing.
func (c *Channel) ack(ctx context.Context, route protocol.Route) {
	if c.cfg.AckMessage == "" {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if _, err := c.postText(cctx, route, "ack", c.cfg.AckMessage); err != nil {
		c.Log.Debug("qq ack message failed", "chat", route.ChatID, "error", err)
	}
}
