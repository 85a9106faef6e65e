package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// request is one Events API envelope, acknowledged, waiting to be handled.
type request struct {
	envelopeID string
	retry      int
	payload    json.RawMessage
	// interactive: a button click (block_actions), not an Events API callback.
	interactive bool
}

// callback is the Events API payload of an envelope.
type callback struct {
	EventID string `json:"event_id"`
	Event   event  `json:"event"`
}

// receive reads the Socket Mode events. Every envelope is acknowledged at
// once (Slack redelivers what is not acknowledged within 3 s); events are
// then handled in order off this loop, so a slow publish never delays an ack.
func (c *Channel) receive(ctx context.Context) {
	for {
		var ev socketmode.Event
		select {
		case <-ctx.Done():
			return
		case ev = <-c.sock.Events:
		}
		switch ev.Type {
		case socketmode.EventTypeConnecting:
			c.Down()
			c.Log.Debug("slack socket mode connecting")
		case socketmode.EventTypeConnected:
			c.Up()
			c.Log.Info("slack socket mode connected")
			if c.BotID() == "" {
				actx, cancel := context.WithTimeout(ctx, 15*time.Second)
				if err := c.identify(actx); err != nil {
					c.Log.Warn("slack auth.test failed", "error", err)
				}
				cancel()
			}
		case socketmode.EventTypeHello:
			c.Log.Debug("slack socket mode hello")
		case socketmode.EventTypeConnectionError, socketmode.EventTypeIncomingError, socketmode.EventTypeErrorWriteFailed:
			if ev.Type != socketmode.EventTypeIncomingError {
				c.Down()
			}
			c.Log.Warn("slack socket mode error", "event", string(ev.Type), "detail", fmt.Sprintf("%+v", ev.Data))
		case socketmode.EventTypeInvalidAuth:
			c.Down()
			c.Log.Error("Slack refused channels.slack.appToken")
		case socketmode.EventTypeErrorBadMessage:
			// A frame slack-go could not parse: still acknowledge an envelope
			// in it, or Slack would redeliver what we can never read.
			if bad, ok := ev.Data.(*socketmode.ErrorBadMessage); ok {
				if id := envelopeIDOf(bad.Message); id != "" {
					c.ack(ctx, id)
					c.Log.Warn("slack envelope could not be read; acknowledged and dropped", "envelope", id, "error", bad.Cause)
				} else {
					c.Log.Debug("slack frame ignored", "error", bad.Cause)
				}
			}
		case socketmode.EventTypeEventsAPI:
			if ev.Request == nil {
				continue
			}
			c.ack(ctx, ev.Request.EnvelopeID)
			c.queue.Push(request{envelopeID: ev.Request.EnvelopeID, retry: ev.Request.RetryAttempt, payload: ev.Request.Payload})
		case socketmode.EventTypeInteractive:
			if ev.Request == nil {
				continue
			}
			c.ack(ctx, ev.Request.EnvelopeID) // within Slack's 3 s; the click is handled in order after
			c.queue.Push(request{envelopeID: ev.Request.EnvelopeID, payload: ev.Request.Payload, interactive: true})
		default:
			// Slash commands are not used: acknowledge so Slack stops asking.
			if ev.Request != nil && ev.Request.EnvelopeID != "" {
				c.ack(ctx, ev.Request.EnvelopeID)
				c.Log.Debug("slack request acknowledged and ignored", "type", string(ev.Type))
			}
		}
	}
}

func (c *Channel) ack(ctx context.Context, envelopeID string) {
	if envelopeID == "" {
		return
	}
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.sock.AckCtx(actx, envelopeID, nil); err != nil {
		c.Log.Warn("slack envelope not acknowledged", "envelope", envelopeID, "error", err)
	}
}

func envelopeIDOf(raw json.RawMessage) string {
	var env struct {
		EnvelopeID string `json:"envelope_id"`
	}
	if json.Unmarshal(raw, &env) != nil {
		return ""
	}
	return env.EnvelopeID
}

// take handles one queued request: a button press or an event.
func (c *Channel) take(ctx context.Context, req request) {
	if req.interactive {
		c.handlePress(ctx, req)
		return
	}
	c.handle(ctx, req)
}

// handle takes one event in: de-duplicated, checked against nanobot's
// rules, turned into an inbound message and published.
func (c *Channel) handle(ctx context.Context, req request) {
	var cb callback
	if err := json.Unmarshal(req.payload, &cb); err != nil {
		c.Log.Warn("slack event payload not understood; dropped", "envelope", req.envelopeID, "error", err)
		return
	}
	e := cb.Event
	if c.Seen().Add(keyOf("envelope:", req.envelopeID), keyOf("event:", cb.EventID)) {
		c.Log.Info("slack event redelivered; already taken in", "event_id", cb.EventID, "envelope", req.envelopeID, "retry", req.retry)
		return
	}
	botID := c.BotID()
	if why := c.policy.decide(e, botID); why != "" {
		level := slog.LevelDebug // the usual traffic of a channel
		if why == skipIncomplete {
			level = slog.LevelWarn // Slack never sends a user's message like this
		}
		c.Log.Log(ctx, level, "slack event skipped", "why", why, "event_id", cb.EventID, "type", e.Type, "channel", e.Channel, "user", e.User)
		return
	}
	msg, ok := c.inbound(ctx, e, botID)
	if !ok {
		c.Log.Debug("slack event skipped", "why", "nothing to say (no text or files)", "event_id", cb.EventID, "channel", e.Channel, "user", e.User)
		return
	}
	reacted := false
	// Only for a sender the manager let in: the files, the reaction.
	admitted := func(ctx context.Context, msg *protocol.Inbound) error {
		var markers []string
		for _, f := range e.Files {
			path, marker := c.download(ctx, f)
			if path != "" {
				msg.Media = append(msg.Media, path)
			}
			markers = append(markers, marker)
		}
		if len(markers) > 0 {
			msg.Content = strings.TrimSpace(strings.Join(append([]string{msg.Content}, markers...), "\n"))
		}
		c.react(ctx, "reactions.add", e.Channel, e.TS, c.cfg.ReactEmoji, true)
		reacted = true
		return nil
	}
	// The same message can arrive as two events (message and app_mention) or be redelivered.
	key := ""
	if e.TS != "" {
		key = "message:" + e.Channel + ":" + e.TS
	}
	err := c.TakeInPatiently(ctx, key, msg, admitted, publishPatience)
	if err != nil && !errors.Is(err, channels.ErrDuplicate) && reacted {
		c.react(ctx, "reactions.remove", e.Channel, e.TS, c.cfg.ReactEmoji, false)
	}
}

// inbound builds the message the agent gets. ok is false when nothing is left to say.
func (c *Channel) inbound(ctx context.Context, e event, botID string) (protocol.Inbound, bool) {
	text := cleanText(e.Text, botID)
	thread := c.policy.threadOf(e)
	content := text
	if !strings.HasPrefix(strings.TrimSpace(text), "/") {
		content = c.withThreadContext(ctx, e, text, botID)
	}
	if content == "" && len(e.Files) == 0 {
		return protocol.Inbound{}, false
	}
	msg := protocol.Inbound{
		ID: messageID(e.Channel, e.TS),
		Route: protocol.Route{
			Channel: Name, ChatID: e.Channel, ThreadID: thread, SenderID: e.User,
		},
		Content: content,
		Group:   !e.isDM(),
		SentAt:  tsTime(e.TS),
		Metadata: map[string]string{
			"slack_ts": e.TS, "slack_thread_ts": e.ThreadTS, "slack_channel_type": e.ChannelType, "slack_event": e.Type,
		},
	}
	if thread != "" {
		msg.Scope = protocol.Within(thread) // nanobot: a thread is a session of its own
	}
	return msg, true
}

// publishPatience is how long a message is retried while Temporal does
// not take it: the envelope is already acknowledged, so this is the
// message's only chance.
const publishPatience = 15 * time.Second

// react adds or removes a reaction, best effort: a missing emoji or a
// reaction already there must not stop a reply.
func (c *Channel) react(ctx context.Context, op, channel, ts, emoji string, add bool) {
	if emoji == "" || channel == "" || ts == "" {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ref := slack.NewRefToMessage(channel, ts)
	var err error
	if add {
		err = c.api.AddReactionContext(rctx, emoji, ref)
	} else {
		err = c.api.RemoveReactionContext(rctx, emoji, ref)
	}
	if err != nil {
		c.Log.Debug("slack reaction failed", "op", op, "emoji", emoji, "channel", channel, "ts", ts, "error", err)
	}
}

var entityUnescaper = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

// cleanText strips the bot's mention (as nanobot does) and undoes Slack's
// escaping of &, < and >, so the model reads what the user typed.
func cleanText(text, botID string) string {
	if botID != "" {
		m := mentionOf(botID)
		for strings.Contains(text, m) {
			i := strings.Index(text, m)
			rest := strings.TrimLeft(text[i+len(m):], " \t\n")
			text = text[:i] + rest
		}
	}
	return strings.TrimSpace(entityUnescaper.Replace(text))
}

// keyOf is a de-duplication key, or "" (no key) when the id is missing.
func keyOf(kind, id string) string {
	if id == "" {
		return ""
	}
	return kind + id
}

// messageID names an inbound message by its Slack channel and ts, so a
// reply can find the message to react to.
func messageID(channel, ts string) string { return "slack:" + channel + ":" + ts }

func parseMessageID(id string) (channel, ts string, ok bool) {
	rest, found := strings.CutPrefix(id, "slack:")
	if !found {
		return "", "", false
	}
	channel, ts, ok = strings.Cut(rest, ":")
	return channel, ts, ok && channel != "" && ts != ""
}

// tsTime reads a Slack ts ("1700000000.000100") as a time; now if it is not one.
func tsTime(ts string) time.Time {
	sec, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || s <= 0 {
		return time.Now()
	}
	us, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	return time.Unix(s, us*1000)
}
