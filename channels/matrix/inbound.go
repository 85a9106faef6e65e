package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// publishPatience bounds how long one message is offered to the agent
// again (each sync of the same batch) before it is given up and logged.
const publishPatience = 10 * time.Minute

// onInvite joins a room the bot is invited to, if the inviter may talk to
// the agent (allowFrom, or approved by pairing): nanobot's auto-join. Other
// invites are left pending and logged. A join that failed for now (a 429,
// the network) is an error: the batch is synced again, the invite with it.
func (c *Channel) onInvite(ctx context.Context, room string, state []json.RawMessage) error {
	me, _ := c.identity()
	inviter := ""
	for _, raw := range state {
		var ev rawEvent // stripped state: no event_id
		if json.Unmarshal(raw, &ev) != nil {
			continue
		}
		if ev.Type == event.StateMember.Type && ev.StateKey != nil && *ev.StateKey == string(me) {
			inviter = ev.Sender
		}
	}
	if inviter == "" {
		c.Log.Warn("matrix invite without its member event; not joined", "room", room)
		return nil
	}
	if !c.mayInvite(inviter) {
		c.Log.Warn("matrix invite from a sender not allowed; not joined", "room", room, "inviter", inviter)
		return nil
	}
	cctx, cancel := callCtx(ctx)
	defer cancel()
	if _, err := c.api().JoinRoomByID(cctx, id.RoomID(room)); err != nil {
		if err := sendError("join", err); !channels.IsPermanent(err) {
			c.Log.Warn("matrix auto-join failed; trying again with the next sync", "room", room, "inviter", inviter, "error", err)
			return err
		}
		c.Log.Error("matrix auto-join refused", "room", room, "inviter", inviter, "error", err)
		return nil
	}
	c.members.forget(room)
	c.Log.Info("matrix joined a room on invite", "room", room, "inviter", inviter)
	return nil
}

// mayInvite is the manager's own rule (channels.Allowed), for the one
// decision taken before any message: whether to join at all.
func (c *Channel) mayInvite(sender string) bool {
	ok, err := channels.Allowed(c.full, c.pairing, Name, sender)
	if err != nil {
		c.Log.Warn("matrix pairing check failed; invite not joined", "sender", sender, "error", err)
	}
	return ok
}

// noteState forgets a room's member count when its membership changes,
// and keeps the room's state for end-to-end encryption.
func (c *Channel) noteState(ctx context.Context, room string, raw json.RawMessage) {
	if e := c.crypto.Load(); e != nil {
		e.noteState(ctx, room, raw)
	}
	var ev struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw, &ev) == nil && ev.Type == event.StateMember.Type {
		c.members.forget(room)
	}
}

// onEvent takes one timeline event in. Bad input is logged with the
// event's id and dropped; only a message the agent could not take (yet)
// returns an error, so the batch is synced again.
func (c *Channel) onEvent(ctx context.Context, room string, raw json.RawMessage) error {
	ev, err := decodeEvent(raw)
	if err != nil {
		c.Log.Warn("matrix event dropped", "room", room, "event_id", eventIDOf(raw), "error", err)
		return nil
	}
	me, _ := c.identity()
	if ev.Type == event.EventEncrypted.Type && ev.Sender != string(me) {
		var ok bool
		if ev, ok = c.decryptEvent(ctx, room, ev, raw); !ok {
			return nil
		}
	}
	switch {
	case ev.Sender == string(me):
		return nil // our own reply, echoed back
	case ev.Type != event.EventMessage.Type:
		if ev.StateKey == nil {
			c.Log.Debug("matrix event of a type not answered", "room", room, "event_id", ev.ID, "type", ev.Type)
		}
		return nil
	}
	m, err := decodeMessage(ev.Content)
	var ignored errIgnored
	switch {
	case errors.As(err, &ignored):
		c.Log.Debug("matrix message not answered", "room", room, "event_id", ev.ID, "why", ignored.why)
		return nil
	case err != nil:
		c.Log.Warn("matrix message dropped", "room", room, "event_id", ev.ID, "sender", ev.Sender, "error", err)
		return nil
	}
	err = c.take(ctx, room, ev, m)
	if channels.Handed(err) {
		return nil
	}
	if c.givenUp(ev.ID, err) {
		c.Seen().Add(ev.ID)
		return nil
	}
	return err // synced again, and taken then
}

// take applies the room policy and hands the message to the manager,
// which checks allowFrom and pairing, then runs the download hook.
func (c *Channel) take(ctx context.Context, room string, ev rawEvent, m message) error {
	group := !c.isDM(ctx, room)
	if group {
		if why := c.cfg.groupGate().Skip(room, func() bool { return c.mentioned(m) }); why != "" {
			c.Log.Debug("matrix room message not for the bot (groupPolicy)", "why", why, "room", room, "event_id", ev.ID)
			return nil
		}
	}
	text := c.stripMention(m.Body)
	if m.media {
		text = m.caption()
		if text == "" {
			text = "[" + m.kind() + ": " + m.fileName() + "]" // still a message: a stranger gets the pairing code
		}
	}
	in := protocol.Inbound{
		Route: protocol.Route{
			Channel: Name, ChatID: room, ThreadID: m.threadRoot(), ReplyTo: ev.ID, SenderID: ev.Sender,
		},
		Content:  text,
		Group:    group,
		Metadata: map[string]string{channels.MetaMessageID: ev.ID},
		SentAt:   time.UnixMilli(ev.TS),
	}
	if root := in.Route.ThreadID; root != "" {
		in.Scope = protocol.Thread("", root) // nanobot's per-thread session
	}
	var admitted channels.Admitted
	if m.media {
		admitted = func(ctx context.Context, in *protocol.Inbound) error {
			c.downloadInto(ctx, in, ev.ID, m)
			return nil
		}
	}
	// Claimed before it is handed over: another gateway syncing the same
	// account gets the event at the same moment, and one of them takes it.
	return c.TakeIn(ctx, ev.ID, in, admitted)
}

// givenUp tells whether a message the agent keeps refusing has been
// offered long enough: then it is logged and dropped, so one message
// cannot stall the room's sync for ever.
func (c *Channel) givenUp(eventID string, err error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failing.id != eventID {
		c.failing.id, c.failing.since = eventID, time.Now()
		return false
	}
	if time.Since(c.failing.since) < publishPatience {
		return false
	}
	c.Log.Error("matrix message given up: the agent refused it for too long", "event_id", eventID, "error", err)
	return true
}
