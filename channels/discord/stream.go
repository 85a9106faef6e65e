package discord

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

const (
	// streamInterval spaces the edits of a message being drawn (Discord
	// allows about five edits per five seconds in a channel).
	streamInterval = time.Second
	// streamWait bounds how long the final answer waits for drawing to finish.
	streamWait = 15 * time.Second
)

// SendDelta implements channels.Streamer. It only records the event, so
// the model's stream never waits on Discord.
func (c *Channel) SendDelta(_ context.Context, ev channels.StreamEvent) {
	if !snowflake.MatchString(ev.Route.ChatID) {
		return
	}
	c.streams.Record(ev)
}

// drawer is the channel as channels.EditStreams draws through it.
type drawer struct{ c *Channel }

// DrawText: the text as it grows, cut at Discord's limit; once the call
// ended, the first part the final answer will have (so taking it over
// needs no edit).
func (d drawer) DrawText(text string, ended bool) string {
	if ended {
		parts := channels.Parts(channels.Reply{Text: text}, maxMessageRunes)
		if len(parts) == 0 {
			return ""
		}
		return render(parts[0].Text)
	}
	preview := render(text)
	if utf8.RuneCountInString(preview) > maxMessageRunes {
		preview = string([]rune(preview)[:maxMessageRunes-1]) + "…"
	}
	return preview
}

// DrawHint: a tool hint as Discord's small grey subtext.
func (d drawer) DrawHint(hint string) string { return "-# ↳ " + hint }

// PostDrawn: the turn's first message answers the user's.
func (d drawer) PostDrawn(ctx context.Context, route protocol.Route, text string, first bool) (string, error) {
	var ref = d.c.reference(route, 0)
	if !first {
		ref = nil
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return d.c.post(cctx, route.ChatID, newMessage(text, ref))
}

func (d drawer) EditDrawn(ctx context.Context, route protocol.Route, id, text string) error {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return d.c.edit(cctx, route.ChatID, id, text)
}
