package feishu

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// maxMessageRunes cuts a reply into cards well under Feishu's 30 KB card limit.
const maxMessageRunes = 4000

// streamInterval spaces the updates of a card being drawn (Feishu allows
// a few updates a second on one message).
const streamInterval = time.Second

// newSession is /new's answer; a p2p chat shows it as a divider line.
const newSession = "New session started."

var newSessionDivider = jsonString(map[string]any{"type": "divider",
	"params": map[string]any{"divider_text": map[string]string{"text": newSession}}})

// MaxLength implements channels.PartSender.
func (c *Channel) MaxLength() int { return maxMessageRunes }

// StreamEvery implements channels.Editor: channels.feishu.streaming.
func (c *Channel) StreamEvery() time.Duration { return c.streamEvery }

// SendPart implements channels.PartSender: a file uploaded and sent (a URL
// as a link), a piece of text as cards.
func (c *Channel) SendPart(ctx context.Context, r channels.Reply, p channels.Part) (string, error) {
	if r.Route.ChatID == "" {
		return "", &channels.SendError{Err: fmt.Errorf("feishu reply without a chat"), Permanent: true}
	}
	if p.Media != "" {
		return c.sendMedia(ctx, r.Route, p)
	}
	if strings.TrimSpace(p.Text) == newSession && !isGroupChat(r.Route.ChatID) {
		return c.post(ctx, r.Route, p.Index, "system", newSessionDivider) // nanobot's divider in a p2p chat
	}
	var id string
	for i, card := range cards(p.Text) {
		var err error
		if id, err = c.post(ctx, r.Route, p.Index+i, "interactive", card); err != nil {
			return id, err
		}
	}
	return id, nil
}

// EditMessage implements channels.Editor: PATCH the card with the text so far.
func (c *Channel) EditMessage(ctx context.Context, route protocol.Route, messageID, text string) error {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	err := c.api.call(cctx, request{op: "update card", method: http.MethodPatch,
		path: "/open-apis/im/v1/messages/" + url.PathEscape(messageID), json: map[string]string{"content": oneCard(text)}}, nil)
	return err
}

func (c *Channel) sendMedia(ctx context.Context, route protocol.Route, p channels.Part) (string, error) {
	ref := p.Media
	if channels.IsLink(ref) {
		return c.post(ctx, route, p.Index, "interactive", cardJSON([]element{{"tag": "markdown", "content": ref}}))
	}
	path := channels.WorkspacePath(c.workspace, ref)
	uctx, cancel := context.WithTimeout(ctx, 2*callTimeout)
	typ, content, err := c.upload(uctx, path)
	cancel()
	if err != nil {
		if !errors.Is(err, errLocalFile) && !channels.IsPermanent(err) {
			return "", err
		}
		c.Log.Warn("feishu attachment not sent", "file", path, "error", err)
		note := channels.FileNote(filepath.Base(path), "send failed")
		return c.post(ctx, route, p.Index, "interactive", cardJSON([]element{{"tag": "markdown", "content": note}}))
	}
	return c.post(ctx, route, p.Index, typ, content)
}

// post sends one message: a reply to the user's message when nanobot
// would (replyToMessage, or the message came in a topic: the reply stays
// in it), else a new message in the chat.
func (c *Channel) post(ctx context.Context, route protocol.Route, index int, msgType, content string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var got struct {
		MessageID string `json:"message_id"`
	}
	inThread := route.ThreadID != ""
	target := route.ReplyTo
	if target == "" && strings.HasPrefix(route.ThreadID, "om_") {
		target = route.ThreadID // progress in a topic: a reply to its root stays in it
	}
	if target != "" && (inThread || (c.cfg.ReplyToMessage && index == 0)) {
		body := map[string]any{"msg_type": msgType, "content": content}
		if inThread || (c.cfg.ReplyToMessage && isGroupChat(route.ChatID)) {
			body["reply_in_thread"] = true
		}
		err := c.api.call(cctx, request{op: "reply", method: http.MethodPost,
			path: "/open-apis/im/v1/messages/" + url.PathEscape(target) + "/reply", json: body}, &got)
		if err == nil {
			return got.MessageID, nil
		}
		if channels.IsPermanent(err) {
			c.Log.Warn("feishu reply refused; sending to the chat instead", "message_id", target, "error", err)
		} else {
			return "", err
		}
	}
	idType := "open_id"
	if isGroupChat(route.ChatID) {
		idType = "chat_id"
	}
	err := c.api.call(cctx, request{op: "send message", method: http.MethodPost,
		path: "/open-apis/im/v1/messages?receive_id_type=" + idType,
		json: map[string]string{"receive_id": route.ChatID, "msg_type": msgType, "content": content}}, &got)
	if err != nil {
		return "", err
	}
	return got.MessageID, nil
}

// isGroupChat: a chat_id (oc_…); a p2p chat is addressed by the user's open_id.
func isGroupChat(chat string) bool { return strings.HasPrefix(chat, "oc_") }

// AckEmoji implements channels.Reactor: nanobot's reactEmoji.
func (c *Channel) AckEmoji() string { return c.cfg.ReactEmoji }

// React implements channels.Reactor: POST …/messages/{id}/reactions.
func (c *Channel) React(ctx context.Context, _ protocol.Route, messageID, emoji string) error {
	var got struct {
		ReactionID string `json:"reaction_id"`
	}
	err := c.api.call(ctx, request{op: "add reaction", method: http.MethodPost,
		path: "/open-apis/im/v1/messages/" + url.PathEscape(messageID) + "/reactions",
		json: map[string]any{"reaction_type": map[string]string{"emoji_type": emoji}}}, &got)
	if err != nil {
		return err
	}
	c.reactMu.Lock()
	defer c.reactMu.Unlock()
	if len(c.reactions) > 500 {
		clear(c.reactions) // reactions left on a turn that never ended
	}
	c.reactions[messageID+"\x00"+emoji] = got.ReactionID
	return nil
}

// Unreact implements channels.Reactor: the reaction React put on comes
// off (DELETE …/reactions/{reaction_id}), and doneEmoji, if set, goes on.
func (c *Channel) Unreact(ctx context.Context, route protocol.Route, messageID, emoji string) error {
	c.reactMu.Lock()
	key := messageID + "\x00" + emoji
	rid := c.reactions[key]
	delete(c.reactions, key)
	c.reactMu.Unlock()
	if rid != "" {
		err := c.api.call(ctx, request{op: "remove reaction", method: http.MethodDelete,
			path: "/open-apis/im/v1/messages/" + url.PathEscape(messageID) + "/reactions/" + url.PathEscape(rid)}, nil)
		if err != nil {
			return err
		}
	}
	if c.cfg.DoneEmoji != "" && c.cfg.DoneEmoji != emoji {
		return c.React(ctx, route, messageID, c.cfg.DoneEmoji)
	}
	return nil
}
