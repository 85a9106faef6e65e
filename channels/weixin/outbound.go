package weixin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// maxMessageRunes is nanobot's WEIXIN_MAX_MESSAGE_LEN.
const maxMessageRunes = 1800

// MaxLength implements channels.PartSender.
func (c *Channel) MaxLength() int { return maxMessageRunes }

// SendPart implements channels.PartSender: one sendmessage with the
// user's context token. WeChat shows no Markdown: text goes as plain text;
// a file is uploaded to the CDN and sent as its image/video/voice/file item.
func (c *Channel) SendPart(ctx context.Context, r channels.Reply, p channels.Part) (string, error) {
	if c.expired.Load() {
		return "", &channels.SendError{Err: errors.New(expiredHint), Permanent: true}
	}
	token := c.contextToken(ctx, r.Route.ChatID)
	if token == "" {
		return "", &channels.SendError{Err: fmt.Errorf("weixin: no context_token for %s: WeChat lets the bot answer only a user who wrote to it", r.Route.ChatID), Permanent: true}
	}
	if p.Index == 0 && r.Answer() {
		c.cancelTyping(ctx, r.Route.ChatID)
	}
	id := clientID(r, p)
	item, err := c.partItem(ctx, r, p, id)
	if err != nil || item == nil {
		return "", err
	}
	msg := map[string]any{
		"from_user_id": "", "to_user_id": r.Route.ChatID, "client_id": id,
		"message_type": messageTypeBot, "message_state": messageStateFinish,
		"item_list": []any{item}, "context_token": token,
	}
	cctx, cancel := c.callCtx(ctx)
	defer cancel()
	if err := c.client().post(cctx, epSendMessage, map[string]any{"msg": msg}, nil); err != nil {
		return "", c.sendError(err)
	}
	return id, nil
}

// partItem is the message item of a part: plain text, or a workspace file
// uploaded to the CDN (a URL, or a file that cannot be read, goes as text).
func (c *Channel) partItem(ctx context.Context, r channels.Reply, p channels.Part, id string) (any, error) {
	text := render(p.Text)
	if p.Media != "" {
		if channels.IsLink(p.Media) {
			text = p.Media
		} else {
			cctx, cancel := context.WithTimeout(ctx, 2*callTimeout)
			defer cancel()
			item, err := c.uploadItem(cctx, r.Route.ChatID, p.Media, strings.TrimPrefix(id, "nanobot-"))
			var he *channels.HTTPError
			switch {
			case err == nil:
				return item, nil
			case errors.As(err, &he):
				return nil, c.sendError(err)
			case ctx.Err() != nil:
				return nil, err
			}
			c.Log.Warn("weixin file not sent", "file", p.Media, "error", err)
			text = "[file: " + mediaLabel(p.Media) + " - send failed]"
		}
	}
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	return messageItem{Type: itemText, TextItem: &textItem{Text: text}}, nil
}

// render is the model's Markdown as WeChat shows it: plain text.
func render(md string) string { return strings.TrimSpace(format.Markdown(md)) }

func mediaLabel(media string) string {
	if channels.IsLink(media) {
		return media
	}
	return filepath.Base(media)
}

// clientID names a part the same way on every attempt, so WeChat can
// tell a retried part from a new one (nanobot's per-part client_id).
func clientID(r channels.Reply, p channels.Part) string {
	key := r.Key()
	if key == "" {
		key = r.Route.ChatID + "\x00" + r.Text
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s:%d", key, p.Index)))
	return "nanobot-" + hex.EncodeToString(sum[:])[:20]
}

// sendError tells delivery how to treat a failed sendmessage: an HTTP
// status by the kit's rule, WeChat's own codes as permanent.
func (c *Channel) sendError(err error) error {
	var he *channels.HTTPError
	switch {
	case !errors.As(err, &he):
		return err // the network: retried with backoff
	case he.Code == "":
		if judged := channels.JudgeHTTP(he); judged != error(he) {
			return judged
		}
		return &channels.SendError{Err: err} // a 5xx: retried with backoff
	case sessionExpired(err):
		c.expired.Store(true)
		c.Down()
		c.Log.Error(expiredHint, "error", err)
		return &channels.SendError{Err: fmt.Errorf("%s: %w", expiredHint, err), Permanent: true}
	case answered(err, errContextRestricted):
		return &channels.SendError{Err: fmt.Errorf("weixin: the context token is used up or expired; the user must write again: %w", err), Permanent: true}
	}
	return &channels.SendError{Err: err, Permanent: true}
}

// SendTyping implements channels.Typer: a typing ticket from getconfig
// (kept per user), then sendtyping.
func (c *Channel) SendTyping(ctx context.Context, route protocol.Route) error {
	if c.expired.Load() {
		return nil
	}
	ticket, err := c.ticket(ctx, route.ChatID)
	if err != nil || ticket == "" {
		return err
	}
	cctx, cancel := c.callCtx(ctx)
	defer cancel()
	return c.client().post(cctx, epSendTyping, map[string]any{"ilink_user_id": route.ChatID, "typing_ticket": ticket, "status": typingOn}, nil)
}

// cancelTyping clears "typing…" before the answer, as nanobot does (best effort).
func (c *Channel) cancelTyping(ctx context.Context, user string) {
	c.mu.Lock()
	ticket := c.tickets[user]
	c.mu.Unlock()
	if ticket == "" {
		return
	}
	cctx, cancel := c.callCtx(ctx)
	defer cancel()
	if err := c.client().post(cctx, epSendTyping, map[string]any{"ilink_user_id": user, "typing_ticket": ticket, "status": typingCancel}, nil); err != nil {
		c.Log.Debug("weixin typing cancel failed", "user", user, "error", err)
	}
}

// ticket is the user's typing ticket, asked of getconfig once.
func (c *Channel) ticket(ctx context.Context, user string) (string, error) {
	c.mu.Lock()
	t, ok := c.tickets[user]
	token := c.acct.ContextTokens[user]
	c.mu.Unlock()
	if ok {
		return t, nil
	}
	var resp struct {
		TypingTicket string `json:"typing_ticket"`
	}
	cctx, cancel := c.callCtx(ctx)
	defer cancel()
	body := map[string]any{"ilink_user_id": user, "context_token": nil}
	if token != "" {
		body["context_token"] = token
	}
	if err := c.client().post(cctx, epGetConfig, body, &resp); err != nil {
		return "", err
	}
	c.mu.Lock()
	c.tickets[user] = resp.TypingTicket
	c.mu.Unlock()
	return resp.TypingTicket, nil
}

// contextTokenMaxAge is when a context token is refreshed before a send:
// WeChat expires them after some 90 s without traffic (nanobot's 60 s).
const contextTokenMaxAge = 60 * time.Second

// contextToken is the user's context token, refreshed through getconfig
// when it is old; a failed refresh keeps the old one, as nanobot does.
func (c *Channel) contextToken(ctx context.Context, user string) string {
	c.adoptShared(user)
	c.mu.Lock()
	token, at := c.acct.ContextTokens[user], c.tokenAt[user]
	c.mu.Unlock()
	if token == "" || time.Since(at) < contextTokenMaxAge {
		return token
	}
	var resp struct {
		ContextToken string `json:"context_token"`
	}
	cctx, cancel := c.callCtx(ctx)
	defer cancel()
	if err := c.client().post(cctx, epGetConfig, map[string]any{"ilink_user_id": user, "context_token": token}, &resp); err != nil {
		c.Log.Warn("weixin context token not refreshed; sending with the old one", "user", user, "error", err)
		return token
	}
	if resp.ContextToken == "" || resp.ContextToken == token {
		return token
	}
	now := time.Now()
	c.mu.Lock()
	c.acct.ContextTokens[user], c.tokenAt[user] = resp.ContextToken, now
	c.mu.Unlock()
	c.shareToken(user, resp.ContextToken, now)
	c.saveAccount()
	c.Log.Info("weixin context token refreshed", "user", user, "age", time.Since(at).Round(time.Second))
	return resp.ContextToken
}
