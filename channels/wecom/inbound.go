package wecom

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// typeLabels are nanobot's placeholders for what has no text (MSG_TYPE_MAP).
var typeLabels = map[string]string{"image": "[image]", "voice": "[voice]", "file": "[file]", "mixed": "[mixed content]"}

func typeLabel(kind string) string {
	if l, ok := typeLabels[kind]; ok {
		return l
	}
	return "[" + kind + "]"
}

// handle takes one callback in.
func (c *Channel) handle(ctx context.Context, f frame) {
	var body callback
	if err := json.Unmarshal(f.Body, &body); err != nil {
		c.Log.Warn("wecom callback dropped: bad body", "req_id", f.Headers.ReqID, "error", err)
		return
	}
	if f.Cmd == cmdEventCallback {
		c.event(ctx, f, body)
		return
	}
	c.message(ctx, f, body)
}

// event handles enter_chat (the welcome message) and disconnected_event.
func (c *Channel) event(ctx context.Context, f frame, body callback) {
	kind := ""
	if body.Event != nil {
		kind = body.Event.EventType
	}
	switch kind {
	case eventEnterChat:
		c.welcome(ctx, f, body)
	case eventDisconnected:
		c.Log.Warn("wecom says a newer connection of this bot took over; this one will be closed", "req_id", f.Headers.ReqID)
	default:
		c.Log.Debug("wecom event ignored", "event", kind, "req_id", f.Headers.ReqID)
	}
}

// welcome answers enter_chat with welcomeMessage, to allowed users only
// (nanobot's rule), within WeCom's 5 seconds.
func (c *Channel) welcome(ctx context.Context, f frame, body callback) {
	user := body.From.UserID
	if user == "" {
		user = body.ChatID
	}
	if c.cfg.WelcomeMessage == "" || user == "" {
		return
	}
	if ok, err := channels.Allowed(c.all, c.pairing, Name, user); err != nil || !ok {
		c.Log.Debug("wecom welcome not sent: user not allowed", "user", user, "error", err)
		return
	}
	cn := c.current()
	if cn == nil {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, welcomeDeadline)
	defer cancel()
	if _, err := cn.request(wctx, cmdRespondWelcome, f.Headers.ReqID,
		textBody{MsgType: "text", Text: content{Content: c.cfg.WelcomeMessage}}); err != nil {
		c.Log.Warn("wecom welcome message not sent", "user", user, "error", err)
	}
}

// piece is one part of a message: text, or a file to fetch once admitted.
type piece struct {
	text string
	kind string // "image" or "file" for a resource
	res  *resource
}

// message takes a message callback in: de-duplicated, turned into an
// inbound message and published; files are fetched only once admitted.
func (c *Channel) message(ctx context.Context, f frame, body callback) {
	sender := body.From.UserID
	if sender == "" {
		c.Log.Warn("wecom message dropped: no sender", "req_id", f.Headers.ReqID, "msgid", body.MsgID)
		return
	}
	msgID := body.MsgID
	if msgID == "" {
		msgID = body.ChatID + "_" + strconv.FormatInt(body.CreateTime, 10)
	}
	pieces := piecesOf(body)
	pre := render(pieces, nil)
	if pre == "" {
		c.Log.Debug("wecom message without content skipped", "msgid", msgID, "msgtype", body.MsgType)
		return
	}
	chatID := body.ChatID
	if body.ChatType != chatGroup || chatID == "" {
		chatID = sender // a DM's chat is its user
	}
	c.replies.put(msgID, f.Headers.ReqID)
	sent := time.Now()
	if body.CreateTime > 0 {
		sent = time.Unix(body.CreateTime, 0)
	}
	msg := protocol.Inbound{
		ID:      "wecom:" + msgID,
		Route:   protocol.Route{Channel: Name, ChatID: chatID, SenderID: sender, ReplyTo: msgID},
		Content: pre, Group: body.ChatType == chatGroup, SentAt: sent,
		Metadata: map[string]string{channels.MetaMessageID: msgID, "msg_type": body.MsgType, "chat_type": chatTypeOf(body)},
	}
	admitted := func(ctx context.Context, msg *protocol.Inbound) error {
		if !hasResources(pieces) {
			return nil
		}
		paths := map[int]string{}
		for i, p := range pieces {
			if p.res == nil {
				continue
			}
			path, err := c.download(ctx, msgID, i, p)
			if err != nil {
				c.Log.Warn("wecom file not downloaded", "msgid", msgID, "kind", p.kind, "error", err)
				continue
			}
			paths[i] = path
			msg.Media = append(msg.Media, path)
		}
		msg.Content = render(pieces, paths)
		return nil
	}
	_ = c.TakeInPatiently(ctx, "msg:"+msgID, msg, admitted, channels.PublishPatience) // WeCom never sends a callback again: offered until Temporal takes it
}

func chatTypeOf(b callback) string {
	if b.ChatType == "" {
		return chatSingle
	}
	return b.ChatType
}

// piecesOf lays a message out as nanobot reads it: text, voice with its
// transcription, images and files, a mixed message item by item.
func piecesOf(b callback) []piece {
	switch b.MsgType {
	case "text":
		if b.Text != nil && b.Text.Content != "" {
			return []piece{{text: b.Text.Content}}
		}
		return nil
	case "voice":
		if b.Voice != nil && b.Voice.Content != "" {
			return []piece{{text: "[voice] " + b.Voice.Content}}
		}
		return []piece{{text: "[voice]"}}
	case "image":
		return []piece{{kind: "image", res: orEmpty(b.Image)}}
	case "file":
		return []piece{{kind: "file", res: orEmpty(b.File)}}
	case "mixed":
		var out []piece
		if b.Mixed == nil {
			return nil
		}
		for _, it := range b.Mixed.Items {
			switch it.MsgType {
			case "text":
				if it.Text != nil && it.Text.Content != "" {
					out = append(out, piece{text: it.Text.Content})
				}
			case "image":
				if it.Image != nil && it.Image.URL != "" && it.Image.AESKey != "" {
					out = append(out, piece{kind: "image", res: it.Image})
				}
			default:
				out = append(out, piece{text: typeLabel(it.MsgType)})
			}
		}
		return out
	}
	return []piece{{text: typeLabel(b.MsgType)}}
}

func orEmpty(r *resource) *resource {
	if r == nil {
		return &resource{}
	}
	return r
}

func hasResources(ps []piece) bool {
	for _, p := range ps {
		if p.res != nil {
			return true
		}
	}
	return false
}

// render is the message's text with each file as nanobot names it: its
// saved name once downloaded (paths by piece), "download failed" if not;
// before admission (paths nil) a file is its type's placeholder.
func render(ps []piece, paths map[int]string) string {
	var lines []string
	for i, p := range ps {
		switch {
		case p.res == nil:
			lines = append(lines, p.text)
		case paths == nil:
			lines = append(lines, typeLabel(p.kind))
		case paths[i] != "":
			lines = append(lines, "["+p.kind+": "+filepath.Base(paths[i])+"]")
		case p.kind == "file":
			name := p.res.Name
			if name == "" {
				name = "unknown"
			}
			lines = append(lines, "[file: "+name+": download failed]")
		default:
			lines = append(lines, "[image: download failed]")
		}
	}
	return strings.Join(lines, "\n")
}
