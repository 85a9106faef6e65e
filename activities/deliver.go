package activities

import (
	"context"
	"fmt"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Deliver hands a reply to the channel this process owns. It runs on the
// process's own task queue, so it lands where the chat connection lives.
func (a *Activities) Deliver(ctx context.Context, in protocol.DeliverInput) error {
	text := in.Text
	if in.EntryID != "" {
		sess, err := a.load(ctx, in.SessionKey)
		if err != nil {
			return err
		}
		i := sess.Find(in.Turn, in.EntryID)
		if i < 0 {
			return fmt.Errorf("reply %s of turn %s is not in the journal of session %s", in.EntryID, in.Turn, in.SessionKey)
		}
		text = sess.Messages[i].Content
	}
	r := channels.Reply{
		SessionKey: in.SessionKey, ChatID: in.ChatID, Turn: in.Turn,
		MessageIDs: in.MessageIDs, Text: text, StopReason: in.StopReason,
	}
	if err := a.Channels.Send(ctx, in.Channel, r); err != nil {
		return fmt.Errorf("deliver to %s:%s: %w", in.Channel, in.ChatID, err)
	}
	return nil
}
