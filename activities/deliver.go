package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/media"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
)

// Delivery hands replies to the channels this process owns.
type Delivery struct {
	journal
	channels *channels.Manager
	media    media.Store // a reply's files, fetched to this host
}

// Deliver hands a reply to the channel this process owns. It runs on the
// process's own task queue, so it lands where the chat connection lives.
func (a *Delivery) Deliver(ctx context.Context, in protocol.DeliverInput) error {
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
	files, err := media.LocalAll(ctx, a.media, in.Media)
	if err != nil {
		return fmt.Errorf("fetch the reply's files: %w", err)
	}
	r := channels.Reply{
		ID:    in.Turn + "#" + in.EntryID + "#" + strings.Join(in.MessageIDs, ","),
		Route: in.Route, SessionKey: in.SessionKey, Turn: in.Turn,
		MessageIDs: in.MessageIDs, Text: text, Media: files, StopReason: in.StopReason, Kind: in.Kind,
		Approval: in.Approval, Drawn: in.Drawn,
	}
	if in.Approval != nil {
		r.ID = in.Turn + "#approval-" + in.Approval.ID // one request, one message, whatever the retries
	}
	prog := newDeliveryProgress(ctx)
	if err := a.channels.Send(channels.WithProgress(ctx, prog.prior(), prog.record), r); err != nil {
		return deliveryError(in.Route, err)
	}
	return nil
}

// deliveryError makes a failed send an activity error the retry policy
// understands: a platform's retry-after sets the next delay, a permanent
// refusal is not retried.
func deliveryError(r protocol.Route, err error) error {
	msg := fmt.Sprintf("deliver to %s: %v", r, err)
	var se *channels.SendError
	if errors.As(err, &se) {
		if se.Permanent {
			return temporal.NewNonRetryableApplicationError(msg, protocol.ErrDeliveryRejected, err)
		}
		return temporal.NewApplicationErrorWithOptions(msg, "DeliveryFailed",
			temporal.ApplicationErrorOptions{NextRetryDelay: se.RetryAfter, Cause: err})
	}
	return fmt.Errorf("deliver to %s: %w", r, err)
}

// UndeliveredKey is the session metadata that holds replies whose process
// went away before it could show them (a CLI closed mid-turn).
const UndeliveredKey = "undelivered"

// Undelivered is one reply the next CLI of the session shows first.
type Undelivered struct {
	Turn    string `json:"turn"`
	EntryID string `json:"entry_id,omitempty"`
	Text    string `json:"text,omitempty"`
	Channel string `json:"channel"`
	ChatID  string `json:"chat_id"`
}

// MarkUndelivered notes a reply that found nobody to take it.
func (a *Delivery) MarkUndelivered(ctx context.Context, in protocol.DeliverInput) error {
	return a.store.Update(ctx, in.SessionKey, func(s *session.Session) error {
		list := undeliveredOf(s)
		for _, u := range list {
			if u.Turn == in.Turn && u.EntryID == in.EntryID {
				return nil // a retried activity
			}
		}
		list = append(list, Undelivered{Turn: in.Turn, EntryID: in.EntryID, Text: in.Text, Channel: in.Route.Channel, ChatID: in.Route.ChatID})
		s.Metadata[UndeliveredKey] = list
		return nil
	})
}

// TakeUndelivered returns the texts of the replies on a channel's chat that
// nobody showed, oldest first, and forgets them.
func TakeUndelivered(ctx context.Context, store session.Store, key, channel, chatID string) ([]string, error) {
	var texts []string
	err := store.Update(ctx, key, func(s *session.Session) error {
		var keep []Undelivered
		for _, u := range undeliveredOf(s) {
			if u.Channel != channel || u.ChatID != chatID {
				keep = append(keep, u)
				continue
			}
			text := u.Text
			if u.EntryID != "" {
				if i := s.Find(u.Turn, u.EntryID); i >= 0 {
					text = s.Messages[i].Content
				}
			}
			texts = append(texts, text)
		}
		if len(keep) == 0 {
			delete(s.Metadata, UndeliveredKey)
		} else {
			s.Metadata[UndeliveredKey] = keep
		}
		return nil
	})
	return texts, err
}

// undeliveredOf reads the list whether it was just set or came from JSON.
func undeliveredOf(s *session.Session) []Undelivered {
	switch v := s.Metadata[UndeliveredKey].(type) {
	case []Undelivered:
		return v
	case nil:
		return nil
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			return nil
		}
		var list []Undelivered
		_ = json.Unmarshal(raw, &list)
		return list
	}
}
