package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"time"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// MaxMessageRunes is one event's share of a reply. A homeserver takes
// events up to 65,536 bytes; an event carries the text twice (body and
// formatted_body, the latter dropped when too big), and encrypted it grows
// by a third (Megolm's base64): 10,000 runes fit even as 4-byte runes,
// with room for a longer envelope than the tests' homeserver makes.
const MaxMessageRunes = 10_000

// maxContentBytes is where an event's content is slimmed (formatted_body
// dropped) to stay under the homeserver's limit with the envelope;
// maxSealedContentBytes is that of a content to encrypt (Megolm's base64
// makes it a third bigger).
const (
	maxContentBytes       = 60_000
	maxSealedContentBytes = 45_000
)

// typingTimeout outlives the manager's renewal (every 4 s) by a margin.
const typingTimeout = 10 * time.Second

// MaxLength implements channels.PartSender.
func (c *Channel) MaxLength() int { return MaxMessageRunes }

// SendPart implements channels.PartSender: a file uploaded and shown, a
// piece of Markdown sent as body and HTML; the first piece answers the
// user's event (m.in_reply_to, or the thread). The last part of an answer
// ends the bot's typing.
func (c *Channel) SendPart(ctx context.Context, r channels.Reply, p channels.Part) (string, error) {
	var (
		eventID string
		err     error
	)
	if p.Media != "" {
		eventID, err = c.sendFile(ctx, r, p)
	} else {
		eventID, err = c.sendText(ctx, r, p)
	}
	if err != nil {
		return "", err
	}
	if p.Last && r.Kind != protocol.ReplyMessage {
		c.stopTyping(ctx, r.Route)
	}
	return eventID, nil
}

// EditMessage implements channels.Editor: the event's text replaced (m.replace).
func (c *Channel) EditMessage(ctx context.Context, route protocol.Route, eventID, text string) error {
	return c.send(ctx, route.ChatID, editContent(eventID, text))
}

// StreamEvery implements channels.Editor: with channels.matrix.streaming
// the manager draws a reply into one event, edited at most once a second.
func (c *Channel) StreamEvery() time.Duration {
	return channels.EditEvery(c.cfg.Streaming, time.Second)
}

func (c *Channel) sendText(ctx context.Context, r channels.Reply, p channels.Part) (string, error) {
	content := textContent(p.Text)
	content.RelatesTo = relation(r.Route, p.Index == 0)
	return c.post(ctx, r.Route.ChatID, content)
}

// sendFile shows one of the reply's files. A URL is sent as a link; a
// file that cannot be read or is over the limit is named in the room
// rather than failing the whole reply.
func (c *Channel) sendFile(ctx context.Context, r channels.Reply, p channels.Part) (string, error) {
	if strings.HasPrefix(p.Media, "http://") || strings.HasPrefix(p.Media, "https://") {
		content := textContent(p.Media)
		content.RelatesTo = relation(r.Route, p.Index == 0)
		return c.post(ctx, r.Route.ChatID, content)
	}
	content, err := c.fileContent(ctx, r.Route.ChatID, c.mediaPath(p.Media))
	var local *fileError
	if errors.As(err, &local) || channels.IsPermanent(err) {
		c.Log.Warn("matrix file not sent", "file", p.Media, "error", err)
		content = textContent("(file not sent: " + filepath.Base(p.Media) + ")")
	} else if err != nil {
		return "", err
	}
	content.RelatesTo = relation(r.Route, p.Index == 0)
	return c.post(ctx, r.Route.ChatID, content)
}

func (c *Channel) mediaPath(p string) string {
	if filepath.IsAbs(p) || c.workspace == "" {
		return p
	}
	return filepath.Join(c.workspace, p)
}

// post sends an m.room.message and returns its event id.
func (c *Channel) post(ctx context.Context, room string, content *event.MessageEventContent) (string, error) {
	cctx, cancel := callCtx(ctx)
	defer cancel()
	typ, sealed, err := c.seal(cctx, room, event.EventMessage, content)
	if err != nil {
		return "", err
	}
	resp, err := c.api().SendMessageEvent(cctx, id.RoomID(room), typ, sealed)
	if err != nil {
		return "", sendError("send", err)
	}
	return string(resp.EventID), nil
}

// send is post when the event id is not needed (an edit).
func (c *Channel) send(ctx context.Context, room string, content *event.MessageEventContent) error {
	_, err := c.post(ctx, room, content)
	return err
}

// textContent is an m.text of Markdown: the text as body, its HTML as
// formatted_body when it has formatting, and no one pinged (m.mentions {}).
func textContent(markdown string) *event.MessageEventContent {
	content := &event.MessageEventContent{MsgType: event.MsgText, Body: markdown, Mentions: &event.Mentions{}}
	if h := toHTML(markdown); h != "" {
		content.Format, content.FormattedBody = event.FormatHTML, h
	}
	return content
}

// editContent replaces eventID's text (m.replace): the new text goes in
// m.new_content; the outer body is the "* …" fallback older clients show,
// cut short so an edit weighs no more than a fresh event.
func editContent(eventID, markdown string) *event.MessageEventContent {
	fallback := markdown
	if r := []rune(fallback); len(r) > 500 {
		fallback = string(r[:500]) + "…"
	}
	return &event.MessageEventContent{
		MsgType:    event.MsgText,
		Body:       "* " + fallback,
		Mentions:   &event.Mentions{},
		NewContent: textContent(markdown),
		RelatesTo:  &event.RelatesTo{Type: event.RelReplace, EventID: id.EventID(eventID)},
	}
}

// relation keeps a reply in the user's thread, and makes the first event
// of a reply answer the user's event.
func relation(route protocol.Route, first bool) *event.RelatesTo {
	replyTo := ""
	if first {
		replyTo = route.ReplyTo
	}
	switch {
	case route.ThreadID != "":
		rel := &event.RelatesTo{Type: event.RelThread, EventID: id.EventID(route.ThreadID), IsFallingBack: replyTo == ""}
		in := replyTo
		if in == "" {
			in = route.ThreadID
		}
		rel.InReplyTo = &event.InReplyTo{EventID: id.EventID(in)}
		return rel
	case replyTo != "":
		return &event.RelatesTo{InReplyTo: &event.InReplyTo{EventID: id.EventID(replyTo)}}
	}
	return nil
}

// slim drops the HTML of a content over limit bytes; the plain body (at
// most MaxMessageRunes) always fits an event in the clear.
func slim(content *event.MessageEventContent, limit int) *event.MessageEventContent {
	if size(content) <= limit {
		return content
	}
	out := *content
	out.Format, out.FormattedBody = "", ""
	if nc := out.NewContent; nc != nil {
		inner := *nc
		inner.Format, inner.FormattedBody = "", ""
		out.NewContent = &inner
	}
	return &out
}

func size(content *event.MessageEventContent) int {
	data, err := json.Marshal(content)
	if err != nil {
		return 0
	}
	return len(data)
}

// SendTyping implements channels.Typer; the manager renews it while a turn runs.
func (c *Channel) SendTyping(ctx context.Context, route protocol.Route) error {
	_, err := c.api().UserTyping(ctx, id.RoomID(route.ChatID), true, typingTimeout)
	return err
}

// stopTyping ends the indicator at once once the answer is out (best effort).
func (c *Channel) stopTyping(ctx context.Context, route protocol.Route) {
	cctx, cancel := callCtx(context.WithoutCancel(ctx))
	defer cancel()
	if _, err := c.api().UserTyping(cctx, id.RoomID(route.ChatID), false, 0); err != nil {
		c.Log.Debug("matrix typing not cleared", "room", route.ChatID, "error", err)
	}
}
