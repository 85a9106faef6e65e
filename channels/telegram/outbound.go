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
	"sync"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Send implements channels.Channel. Files go first, then the text in
// pieces of at most MaxMessageRunes; a reply whose turn was streamed here
// turns the streamed message into its first piece. Delivery is retried by
// Temporal: a retry shows only what the failed attempt did not.
func (c *Channel) Send(ctx context.Context, r channels.Reply) error {
	if c.bot == nil {
		return errors.New("telegram channel is not connected")
	}
	if _, err := strconv.ParseInt(r.Route.ChatID, 10, 64); err != nil {
		return &channels.SendError{Err: fmt.Errorf("telegram chat id %q is not a number", r.Route.ChatID), Permanent: true}
	}
	key := r.Key()
	rec := c.sends.get(key)
	if rec.done {
		return nil // shown by an earlier attempt
	}
	if r.Kind != protocol.ReplyMessage {
		c.stopTyping(r.Route)
	}
	if !rec.tookStream && r.Turn != "" && r.Answer() {
		rec.streamMsg, rec.streamShown = c.takeStream(r.Route, r.Turn)
		rec.tookStream = true
		c.sends.put(key, rec)
	}
	var steps []func(context.Context) error
	for _, m := range r.Media {
		steps = append(steps, func(ctx context.Context) error { return c.sendMedia(ctx, r.Route, m) })
	}
	for i, piece := range markdown.Split(r.Text, MaxMessageRunes) {
		if i == 0 && rec.streamMsg != 0 {
			id, shown := rec.streamMsg, rec.streamShown
			steps = append(steps, func(ctx context.Context) error { return c.editChunk(ctx, r.Route, id, piece, shown) })
			continue
		}
		steps = append(steps, func(ctx context.Context) error { _, err := c.sendChunk(ctx, r.Route, piece); return err })
	}
	for i := rec.steps; i < len(steps); i++ {
		if err := steps[i](ctx); err != nil {
			return sendError(err)
		}
		rec.steps = i + 1
		c.sends.put(key, rec)
	}
	rec.done = true
	c.sends.put(key, rec)
	return nil
}

// sendChunk sends one piece of Markdown as Telegram HTML, and as plain
// text when Telegram cannot parse the HTML.
func (c *Channel) sendChunk(ctx context.Context, route protocol.Route, md string) (int, error) {
	id, err := c.sendText(ctx, route, markdown.TelegramHTML(md), true)
	if err != nil && isParseError(err) {
		c.log.Warn("telegram rejected the HTML; sending plain text", "chat", route.ChatID, "error", err)
		return c.sendText(ctx, route, md, false)
	}
	return id, err
}

// editChunk turns message id into the piece of Markdown, as HTML (plain
// text when Telegram cannot parse it). A message that cannot be edited
// (deleted meanwhile) is replaced by a new one.
func (c *Channel) editChunk(ctx context.Context, route protocol.Route, id int, md, shown string) error {
	html := markdown.TelegramHTML(md)
	if html == shown {
		return nil
	}
	err := c.editText(ctx, route, id, html, true)
	if err != nil && isParseError(err) {
		c.log.Warn("telegram rejected the HTML; editing to plain text", "chat", route.ChatID, "error", err)
		err = c.editText(ctx, route, id, md, false)
	}
	switch {
	case err == nil || isNotModified(err):
		return nil
	case errors.Is(err, bot.ErrorBadRequest):
		c.log.Warn("telegram could not edit the streamed message; sending the reply anew", "chat", route.ChatID, "error", err)
		_, err = c.sendChunk(ctx, route, md)
		return err
	default:
		return err
	}
}

// sendText sends one message; html selects parse_mode HTML.
func (c *Channel) sendText(ctx context.Context, route protocol.Route, text string, html bool) (int, error) {
	p := &bot.SendMessageParams{
		ChatID: route.ChatID, Text: text, MessageThreadID: threadID(route),
		ReplyParameters: c.replyTo(route),
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
	if strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://") {
		file = &models.InputFileString{Data: ref}
	} else {
		p := ref
		if !filepath.IsAbs(p) {
			p = filepath.Join(c.workspace, p)
		}
		f, err := os.Open(p)
		if err != nil {
			c.log.Warn("telegram attachment not found", "file", p, "error", err)
			_, err = c.sendText(ctx, route, "[Failed to send: "+name+"]", false)
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
	c.log.Warn("telegram refused an attachment", "file", ref, "error", err)
	_, err = c.sendText(ctx, route, "[Failed to send: "+name+"]", false)
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

// sendRecord is how far one reply got.
type sendRecord struct {
	steps       int // files and pieces shown
	done        bool
	tookStream  bool
	streamMsg   int // the streamed message the first piece replaces
	streamShown string
}

// sendLog remembers the newest replies' progress, so a retried delivery
// (the same turn to the same chat) shows nothing twice.
type sendLog struct {
	mu    sync.Mutex
	n     int
	order []string
	recs  map[string]sendRecord
}

func newSendLog(n int) *sendLog { return &sendLog{n: n, recs: map[string]sendRecord{}} }

func (l *sendLog) get(key string) sendRecord {
	if key == "" {
		return sendRecord{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.recs[key]
}

func (l *sendLog) put(key string, rec sendRecord) {
	if key == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.recs[key]; !ok {
		l.order = append(l.order, key)
		if len(l.order) > l.n {
			delete(l.recs, l.order[0])
			l.order = l.order[1:]
		}
	}
	l.recs[key] = rec
}
