package channels

import (
	"context"
	"fmt"
	"log/slog"
)

// SendParts is delivery for a PartSender: the reply split once at the
// channel's limit (files first, then the text), the parts an earlier
// attempt sent skipped, each part sent recorded before the next. A
// PartSender's Send is this.
func SendParts(ctx context.Context, c PartSender, r Reply) error {
	parts := Parts(r, c.MaxLength())
	done, record := progressOf(ctx)
	if done.Sent > 0 {
		slog.Info("delivery resumed", "channel", c.Name(), "chat", r.Route.ChatID, "sent", done.Sent, "parts", len(parts))
	}
	for i := done.Sent; i < len(parts); i++ {
		id, err := c.SendPart(ctx, r, parts[i])
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
	return nil
}

// Parts are a reply's files, then its text in pieces of at most limit
// runes (a code fence cut in two is closed and reopened).
func Parts(r Reply, limit int) []Part {
	var parts []Part
	for _, m := range r.Media {
		parts = append(parts, Part{Index: len(parts), Media: m})
	}
	for _, piece := range splitText(r.Text, limit) {
		parts = append(parts, Part{Index: len(parts), Text: piece})
	}
	if n := len(parts); n > 0 {
		parts[n-1].Last = true
	}
	return parts
}
