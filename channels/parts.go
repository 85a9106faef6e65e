package channels

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/nanobot-durable/nanobot/channels/markdown"
)

// SendParts is delivery for a PartSender: the reply split once at the
// channel's limit (files first, then the text), the parts an earlier
// attempt sent skipped, each part sent recorded before the next. A
// PartSender's Send is this.
func SendParts(ctx context.Context, c PartSender, r Reply) error { return sendParts(ctx, c, r, nil) }

// sendParts is SendParts where the answer's first text part may take over
// the message streamed for it (streamed gives its id and what it shows).
func sendParts(ctx context.Context, c PartSender, r Reply, streamed func() (id, shown string)) error {
	parts := Parts(r, c.MaxLength())
	var streamID, streamShown string
	if streamed != nil {
		streamID, streamShown = streamed() // taken even when resuming: the drawing is over either way
	}
	done, record := progressOf(ctx)
	if done.Sent > 0 {
		slog.Info("delivery resumed", "channel", c.Name(), "chat", r.Route.ChatID, "sent", done.Sent, "parts", len(parts))
	}
	for i := done.Sent; i < len(parts); i++ {
		id, err := sendPart(ctx, c, r, parts[i], streamID, streamShown)
		if err != nil {
			return fmt.Errorf("part %d of %d: %w", i+1, len(parts), err)
		}
		done.Sent = i + 1
		done.IDs = append(done.IDs, id)
		if err := record(done); err != nil {
			// The part is out; only a crash before the next record would show it twice.
			slog.Warn("delivery progress not recorded", "channel", c.Name(), "chat", r.Route.ChatID, "part", i+1, "error", err)
		}
	}
	if f, ok := c.(Finisher); ok && len(parts) > 0 {
		f.ReplyShown(ctx, r)
	}
	return nil
}

// sendPart shows one part: the answer's first text part edits the message
// streamed for it when there is one (and falls back to a new message if
// the edit fails), any other part is sent.
func sendPart(ctx context.Context, c PartSender, r Reply, p Part, streamID, streamShown string) (string, error) {
	e, edits := c.(Editor)
	if !edits || streamID == "" || p.Text == "" || p.Index != len(r.Media) {
		return c.SendPart(ctx, r, p)
	}
	if p.Text == streamShown {
		return streamID, nil
	}
	err := e.EditMessage(ctx, r.Route, streamID, p.Text)
	if err == nil {
		return streamID, nil
	}
	slog.Warn("could not turn the streamed message into the answer; sending it anew", "channel", c.Name(), "chat", r.Route.ChatID, "error", err)
	return c.SendPart(ctx, r, p)
}

// Parts are a reply's files, then its text in pieces of at most limit
// runes (a code fence cut in two is closed and reopened).
func Parts(r Reply, limit int) []Part {
	var parts []Part
	for _, m := range r.Media {
		parts = append(parts, Part{Index: len(parts), Media: m})
	}
	for _, piece := range markdown.Split(r.Text, limit) {
		parts = append(parts, Part{Index: len(parts), Text: piece})
	}
	if n := len(parts); n > 0 {
		parts[n-1].Last = true
	}
	return parts
}
