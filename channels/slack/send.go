package slack

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
	"github.com/nanobot-durable/nanobot/protocol"
)

// MaxLength implements channels.PartSender.
func (c *Channel) MaxLength() int { return MaxMessageLen }

// SendPart implements channels.PartSender: a file uploaded (a URL posted as
// a link Slack unfurls), a piece of Markdown posted as mrkdwn in the
// route's thread.
func (c *Channel) SendPart(ctx context.Context, r channels.Reply, p channels.Part) (string, error) {
	route := r.Route
	to, err := c.resolveTarget(ctx, route.ChatID)
	if err != nil {
		return "", err
	}
	if to != route.ChatID { // a chat named by the message tool: its thread cannot be there
		route.ChatID, route.ThreadID = to, ""
	}
	if p.Media != "" {
		return "", c.uploadMedia(ctx, route, p.Media)
	}
	text := format.Markdown(p.Text)
	var blocks []slack.Block
	if p.Last {
		blocks = approvalBlocks(r, text) // the buttons go under the request's last piece
	}
	ts, err := c.post(ctx, route, text, blocks...)
	if err != nil {
		return "", sendError("chat.postMessage", err)
	}
	return ts, nil
}

// streamEvery spaces the chat.update calls of a streamed message (Slack's
// chat.update allows about one a second).
const streamEvery = time.Second

// StreamEvery implements channels.Editor.
func (c *Channel) StreamEvery() time.Duration { return streamEvery }

// EditMessage implements channels.Editor: chat.update with the Markdown as mrkdwn.
func (c *Channel) EditMessage(ctx context.Context, route protocol.Route, ts, md string) error {
	return sendError("chat.update", c.update(ctx, route.ChatID, ts, format.Markdown(md)))
}

// DrawHint implements channels.HintDrawer: the call as code after "↳".
func (c *Channel) DrawHint(hint string) string {
	return "↳ `" + strings.ReplaceAll(hint, "`", "'") + "`"
}

// post posts text (with blocks, the text is the notification's fallback).
func (c *Channel) post(ctx context.Context, route protocol.Route, text string, blocks ...slack.Block) (string, error) {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if len(blocks) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(blocks...))
	}
	if route.ThreadID != "" {
		opts = append(opts, slack.MsgOptionTS(route.ThreadID))
	}
	_, ts, err := c.api.PostMessageContext(ctx, route.ChatID, opts...)
	return ts, err
}

func (c *Channel) update(ctx context.Context, chatID, ts, text string) error {
	_, _, _, err := c.api.UpdateMessageContext(ctx, chatID, ts, slack.MsgOptionText(text, false))
	return err
}

// uploadMedia uploads one of the reply's files in its thread. A URL is
// posted as a link (Slack unfurls it); a file that is not there is named in
// the thread rather than failing the whole reply.
func (c *Channel) uploadMedia(ctx context.Context, route protocol.Route, m string) error {
	var err error
	if channels.IsLink(m) {
		_, err = c.post(ctx, route, "<"+markdown.EscapeSlackURL(m)+">")
	} else {
		err = c.upload(ctx, route, c.mediaPath(m))
	}
	if err == nil {
		return nil
	}
	var local *fileError
	if se := sendError("files.upload", err); !errors.As(err, &local) && !channels.IsPermanent(se) {
		return se
	}
	c.Log.Warn("slack file not sent", "file", m, "error", err)
	if _, err := c.post(ctx, route, "_(file not sent: "+markdown.EscapeSlack(filepath.Base(m))+")_"); err != nil {
		return sendError("chat.postMessage", err)
	}
	return nil
}

func (c *Channel) mediaPath(p string) string {
	if filepath.IsAbs(p) || c.workspace == "" {
		return p
	}
	return filepath.Join(c.workspace, p)
}

func (c *Channel) upload(ctx context.Context, route protocol.Route, path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return &fileError{err}
	}
	f, err := os.Open(path)
	if err != nil {
		return &fileError{err}
	}
	defer f.Close()
	_, err = c.api.UploadFileContext(ctx, slack.UploadFileParameters{
		Reader: f, FileSize: int(info.Size()), Filename: filepath.Base(path),
		Channel: route.ChatID, ThreadTimestamp: route.ThreadID,
	})
	return err
}

// fileError is a local file that cannot be read: retrying will not help.
type fileError struct{ err error }

func (e *fileError) Error() string { return e.err.Error() }
func (e *fileError) Unwrap() error { return e.err }

// ReplyShown implements channels.Finisher: reactEmoji becomes doneEmoji on
// the messages a final reply answers, as nanobot does once it has replied.
func (c *Channel) ReplyShown(ctx context.Context, r channels.Reply) {
	if !r.EndsTurn() {
		return
	}
	for _, id := range r.MessageIDs {
		ch, ts, ok := parseMessageID(id)
		if !ok {
			continue
		}
		c.react(ctx, "reactions.remove", ch, ts, c.cfg.ReactEmoji, false)
		c.react(ctx, "reactions.add", ch, ts, c.cfg.DoneEmoji, true)
	}
}
