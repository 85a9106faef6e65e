package slack

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/slack-go/slack"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Send implements channels.Channel: the manager's part-by-part delivery.
func (c *Channel) Send(ctx context.Context, r channels.Reply) error {
	return channels.SendParts(ctx, c, r)
}

// MaxLength implements channels.PartSender.
func (c *Channel) MaxLength() int { return MaxMessageLen }

// SendPart implements channels.PartSender: a file uploaded (a URL posted as
// a link Slack unfurls), a piece of Markdown posted as mrkdwn in the
// route's thread; the first piece of a turn's answer updates the message
// streamed for it instead of posting a second one. After the last part the
// reactEmoji on the messages it answers becomes doneEmoji.
func (c *Channel) SendPart(ctx context.Context, r channels.Reply, p channels.Part) (string, error) {
	route := r.Route
	to, err := c.resolveTarget(ctx, route.ChatID)
	if err != nil {
		return "", err
	}
	if to != route.ChatID { // a chat named by the message tool: its thread cannot be there
		route.ChatID, route.ThreadID = to, ""
	}
	var ts string
	if p.Media != "" {
		err = c.uploadMedia(ctx, route, p.Media)
	} else {
		ts, err = c.postPart(ctx, r, route, p)
	}
	if err != nil {
		return "", err
	}
	if p.Last {
		c.finishReactions(ctx, r)
	}
	return ts, nil
}

// postPart posts one piece, or for the first piece of a streamed answer
// updates the streamed message with it.
func (c *Channel) postPart(ctx context.Context, r channels.Reply, route protocol.Route, p channels.Part) (string, error) {
	text := markdown.SlackMrkdwn(p.Text)
	if p.Index == len(r.Media) && r.Answer() && r.Turn != "" {
		if st := c.streams.finish(r.Turn, r.Route); st != nil && st.ts != "" && st.open {
			err := c.update(ctx, route.ChatID, st.ts, text)
			if err == nil {
				return st.ts, nil
			}
			if !gone(err) {
				return "", sendError("chat.update", err)
			}
			// The streamed message was deleted or can no longer be edited: post the reply instead.
		}
	}
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

// gone tells an update that cannot succeed: the message is not there or
// not editable any more.
func gone(err error) bool {
	switch errorCode(err) {
	case "message_not_found", "cant_update_message", "edit_window_closed", "msg_too_long":
		return true
	}
	return false
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
	if strings.HasPrefix(m, "http://") || strings.HasPrefix(m, "https://") {
		_, err = c.post(ctx, route, "<"+markdown.EscapeSlackURL(m)+">")
	} else {
		err = c.upload(ctx, route, c.mediaPath(m))
	}
	if err == nil {
		return nil
	}
	var local *fileError
	if se := sendError("files.upload", err); !errors.As(err, &local) && !isPermanent(se) {
		return se
	}
	c.log.Warn("slack file not sent", "file", m, "error", err)
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

func isPermanent(err error) bool {
	var se *channels.SendError
	return errors.As(err, &se) && se.Permanent
}

// finishReactions swaps reactEmoji for doneEmoji on the messages a final
// reply answers, as nanobot does once it has replied.
func (c *Channel) finishReactions(ctx context.Context, r channels.Reply) {
	if r.Kind == protocol.ReplyMessage || r.Kind == protocol.ReplyApproval { // the turn goes on
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
