package slack

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/slack-go/slack"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
	"github.com/nanobot-durable/nanobot/protocol"
)

// delivery is how far one reply got: delivery is retried, and a retry
// must go on from there, never post a part twice.
type delivery struct {
	mu       sync.Mutex // one attempt at a time: a timed-out attempt may still run
	parts    []string   // the ts of each part posted
	uploaded int
	complete bool
}

// outbox remembers the last deliveries, by reply.
type outbox struct {
	mu   sync.Mutex
	max  int
	byID map[string]*delivery
	ids  []string
}

func newOutbox(max int) *outbox { return &outbox{max: max, byID: map[string]*delivery{}} }

func (o *outbox) get(id string) *delivery {
	o.mu.Lock()
	defer o.mu.Unlock()
	if d, ok := o.byID[id]; ok {
		return d
	}
	d := &delivery{}
	o.byID[id] = d
	o.ids = append(o.ids, id)
	if len(o.ids) > o.max {
		delete(o.byID, o.ids[0])
		o.ids = o.ids[1:]
	}
	return d
}

// Send implements channels.Channel: the reply as mrkdwn in the route's
// thread, split at MaxMessageLen; the turn's streamed message is updated
// with it rather than a second one posted; its media uploaded; then the
// reactEmoji on the messages it answers becomes doneEmoji. Retried, it
// goes on where the previous attempt stopped.
func (c *Channel) Send(ctx context.Context, r channels.Reply) error {
	d := &delivery{}
	if id := r.Key(); id != "" {
		d = c.sent.get(id)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.complete {
		c.log.Debug("slack reply already sent", "turn", r.Turn, "route", r.Route.String())
		c.finishReactions(ctx, r)
		return nil
	}
	route := r.Route
	to, err := c.resolveTarget(ctx, route.ChatID)
	if err != nil {
		return err
	}
	if to != route.ChatID { // a chat named by the message tool: its thread cannot be there
		route.ChatID, route.ThreadID = to, ""
	}
	final := r.Answer()
	var st *streamed
	if final && r.Turn != "" {
		st = c.streams.finish(r.Turn, r.Route)
	}
	if err := c.postParts(ctx, r, route, d, st); err != nil {
		return err
	}
	if err := c.uploadMedia(ctx, r, route, d); err != nil {
		return err
	}
	d.complete = true
	c.finishReactions(ctx, r)
	return nil
}

// postParts posts (or, for the first, updates the streamed message with)
// the parts not posted yet.
func (c *Channel) postParts(ctx context.Context, r channels.Reply, route protocol.Route, d *delivery, st *streamed) error {
	text := strings.TrimSpace(r.Text)
	if text == "" {
		if len(r.Media) > 0 || (st != nil && st.ts != "") {
			return nil // nothing to say beside the files, or the stream already said it
		}
		text = "…" // Slack refuses an empty message; the turn did answer
	}
	parts := markdown.Split(markdown.SlackMrkdwn(text), MaxMessageLen)
	for i := len(d.parts); i < len(parts); i++ {
		if i == 0 && st != nil && st.ts != "" && st.open {
			err := c.update(ctx, route.ChatID, st.ts, parts[0])
			if err == nil {
				d.parts = append(d.parts, st.ts)
				continue
			}
			if !gone(err) {
				return sendError("chat.update", err)
			}
			// The streamed message was deleted or can no longer be edited: post the reply instead.
		}
		ts, err := c.post(ctx, route, parts[i])
		if err != nil {
			return sendError("chat.postMessage", err)
		}
		d.parts = append(d.parts, ts)
	}
	return nil
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

func (c *Channel) post(ctx context.Context, route protocol.Route, text string) (string, error) {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
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

// uploadMedia uploads the reply's files in its thread. A URL is posted as
// a link (Slack unfurls it); a file that is not there is named in the
// thread rather than failing the whole reply.
func (c *Channel) uploadMedia(ctx context.Context, r channels.Reply, route protocol.Route, d *delivery) error {
	for i := d.uploaded; i < len(r.Media); i++ {
		m := r.Media[i]
		var err error
		if strings.HasPrefix(m, "http://") || strings.HasPrefix(m, "https://") {
			_, err = c.post(ctx, route, "<"+markdown.EscapeSlackURL(m)+">")
		} else {
			err = c.upload(ctx, route, c.mediaPath(m))
		}
		if err != nil {
			var local *fileError
			if se := sendError("files.upload", err); !errors.As(err, &local) && !isPermanent(se) {
				return se
			}
			c.log.Warn("slack file not sent", "file", m, "error", err)
			if _, err := c.post(ctx, route, "_(file not sent: "+markdown.EscapeSlack(filepath.Base(m))+")_"); err != nil {
				return sendError("chat.postMessage", err)
			}
		}
		d.uploaded = i + 1
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
	if r.Kind == protocol.ReplyMessage {
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
