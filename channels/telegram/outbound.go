package telegram

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
	"github.com/nanobot-durable/nanobot/protocol"
)

// MaxLength implements channels.PartSender.
func (c *Channel) MaxLength() int { return MaxMessageRunes }

// SendPart implements channels.PartSender: a file as a photo or document, a
// piece of Markdown as Telegram HTML, a tool hint as a collapsed quote.
func (c *Channel) SendPart(ctx context.Context, r channels.Reply, p channels.Part) (string, error) {
	if c.bot == nil {
		return "", errors.New("telegram channel is not connected")
	}
	if _, err := strconv.ParseInt(r.Route.ChatID, 10, 64); err != nil {
		return "", &channels.SendError{Err: fmt.Errorf("telegram chat id %q is not a number", r.Route.ChatID), Permanent: true}
	}
	if p.Media != "" {
		return "", sendError(c.sendMedia(ctx, r.Route, p.Media))
	}
	if p.Hint {
		id, err := c.sendText(ctx, r.Route, "<blockquote expandable>"+markdown.EscapeHTML(p.Text)+"</blockquote>", true, nil)
		return strconv.Itoa(id), sendError(err)
	}
	var markup models.ReplyMarkup
	if p.Last {
		markup = keyboard(r.Buttons()) // the buttons go under the request's last piece
	}
	id, err := c.sendChunk(ctx, r.Route, p.Text, markup)
	return strconv.Itoa(id), sendError(err)
}

// StreamEvery implements channels.Editor: streamEditInterval, or 0 with
// streaming off.
func (c *Channel) StreamEvery() time.Duration {
	return channels.EditEvery(c.cfg.Streaming, time.Duration(c.cfg.StreamEditInterval*float64(time.Second)))
}

// EditMessage implements channels.Editor: the message shows the Markdown
// as HTML (plain text when Telegram cannot parse it).
func (c *Channel) EditMessage(ctx context.Context, route protocol.Route, messageID, md string) error {
	if c.bot == nil {
		return errors.New("telegram channel is not connected")
	}
	id, err := strconv.Atoi(messageID)
	if err != nil {
		return &channels.SendError{Err: fmt.Errorf("telegram message id %q is not a number", messageID), Permanent: true}
	}
	err = c.editText(ctx, route, id, format.Markdown(md), true)
	if err != nil && isParseError(err) {
		c.Log.Warn("telegram rejected the HTML; editing to plain text", "chat", route.ChatID, "error", err)
		err = c.editText(ctx, route, id, md, false)
	}
	if isNotModified(err) {
		return nil
	}
	return sendError(err)
}

// sendChunk sends one piece of Markdown as Telegram HTML, and as plain
// text when Telegram cannot parse the HTML; markup (nil: none) goes under it.
func (c *Channel) sendChunk(ctx context.Context, route protocol.Route, md string, markup models.ReplyMarkup) (int, error) {
	id, err := c.sendText(ctx, route, format.Markdown(md), true, markup)
	if err != nil && isParseError(err) {
		c.Log.Warn("telegram rejected the HTML; sending plain text", "chat", route.ChatID, "error", err)
		return c.sendText(ctx, route, md, false, markup)
	}
	return id, err
}

// sendText sends one message; html selects parse_mode HTML, markup is an
// inline keyboard under it (nil: none).
func (c *Channel) sendText(ctx context.Context, route protocol.Route, text string, html bool, markup models.ReplyMarkup) (int, error) {
	p := &bot.SendMessageParams{
		ChatID: route.ChatID, Text: text, MessageThreadID: threadID(route),
		ReplyParameters: c.replyTo(route), ReplyMarkup: markup,
	}
	if html {
		p.ParseMode = models.ParseModeHTML
	}
	m, err := c.bot.SendMessage(ctx, p)
	if err != nil {
		return 0, err
	}
	if m == nil {
		return 0, nil
	}
	return m.ID, nil
}

func (c *Channel) editText(ctx context.Context, route protocol.Route, id int, text string, html bool) error {
	p := &bot.EditMessageTextParams{ChatID: route.ChatID, MessageID: id, Text: text}
	if html {
		p.ParseMode = models.ParseModeHTML
	}
	_, err := c.bot.EditMessageText(ctx, p)
	return err
}

// sendMedia sends a workspace file or a URL as a photo or a document. A
// file Telegram refuses becomes a "[Failed to send: name]" line, as in
// nanobot; a rate limit or a network failure is retried.
func (c *Channel) sendMedia(ctx context.Context, route protocol.Route, ref string) error {
	name := filepath.Base(ref)
	var file models.InputFile
	if channels.IsLink(ref) {
		file = &models.InputFileString{Data: ref}
	} else {
		p := channels.WorkspacePath(c.workspace, ref)
		f, err := os.Open(p)
		if err != nil {
			c.Log.Warn("telegram attachment not found", "file", p, "error", err)
			_, err = c.sendText(ctx, route, "[Failed to send: "+name+"]", false, nil)
			return err
		}
		defer f.Close()
		file = &models.InputFileUpload{Filename: name, Data: f}
	}
	var err error
	if isImageName(name) {
		_, err = c.bot.SendPhoto(ctx, &bot.SendPhotoParams{ChatID: route.ChatID, MessageThreadID: threadID(route), Photo: file, ReplyParameters: c.replyTo(route)})
	} else {
		_, err = c.bot.SendDocument(ctx, &bot.SendDocumentParams{ChatID: route.ChatID, MessageThreadID: threadID(route), Document: file, ReplyParameters: c.replyTo(route)})
	}
	if err == nil || !serverRefused(err) {
		return err // a rate limit or the network: worth another attempt
	}
	c.Log.Warn("telegram refused an attachment", "file", ref, "error", err)
	_, err = c.sendText(ctx, route, "[Failed to send: "+name+"]", false, nil)
	return err
}

func isImageName(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".jpg", ".jpeg", ".png", ".gif", ".webp":
		return true
	}
	return false
}

// replyTo quotes the user's message when replyToMessage is on.
func (c *Channel) replyTo(route protocol.Route) *models.ReplyParameters {
	if !c.cfg.ReplyToMessage || route.ReplyTo == "" {
		return nil
	}
	id, err := strconv.Atoi(route.ReplyTo)
	if err != nil {
		return nil
	}
	return &models.ReplyParameters{MessageID: id, AllowSendingWithoutReply: true}
}

func threadID(route protocol.Route) int {
	id, _ := strconv.Atoi(route.ThreadID)
	return id
}

// sendError tells delivery how to retry: Telegram's retry_after for a 429;
// never for a chat that is gone, a bot that was blocked or a request
// Telegram called bad (the same request fails the same way).
func sendError(err error) error {
	var tooMany *bot.TooManyRequestsError
	if errors.As(err, &tooMany) {
		return &channels.SendError{Err: err, RetryAfter: time.Duration(tooMany.RetryAfter) * time.Second}
	}
	var migrate *bot.MigrateError
	if errors.Is(err, bot.ErrorForbidden) || errors.Is(err, bot.ErrorBadRequest) || errors.As(err, &migrate) {
		return &channels.SendError{Err: err, Permanent: true}
	}
	return err
}

// serverRefused reports an error the server answered with, other than a
// rate limit: a file it will not take is shown as a line of text, as
// nanobot does, instead of failing the whole reply again and again.
func serverRefused(err error) bool {
	var tooMany *bot.TooManyRequestsError
	var netErr *url.Error
	return !errors.As(err, &tooMany) && !errors.As(err, &netErr) &&
		!errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled)
}

func isParseError(err error) bool {
	if !errors.Is(err, bot.ErrorBadRequest) {
		return false
	}
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "parse entities") || strings.Contains(s, "start tag") || strings.Contains(s, "end tag")
}

func isNotModified(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "message is not modified")
}
