package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
)

// cryptoFile is the device's crypto store under <nanobot home>/channels:
// losing it loses the device's keys, and the senders' sessions with it.
const cryptoFile = "matrix-crypto.db"

// setUpE2EE gives a freshly logged-in client its device's end-to-end
// encryption: the store kept for the same device, or the device's own
// opened (created on its first start). A homeserver not answering fails
// the login, which is retried; a store that cannot serve the device turns
// encryption off with an error line, and plain rooms still work.
func (c *Channel) setUpE2EE(ctx context.Context, client *mautrix.Client) error {
	if !c.cfg.E2EEEnabled || !e2eeBuilt {
		return nil
	}
	if cur := c.crypto.Load(); cur != nil {
		if cur.device() == client.DeviceID && cur.usable() {
			cur.bind(client)
			return nil
		}
		c.crypto.Store(nil)
		cur.close()
	}
	path := c.statePath(cryptoFile)
	if path == "" {
		c.Log.Warn("matrix end-to-end encryption off: no nanobot home to keep the device's keys in; encrypted rooms are skipped")
		return nil
	}
	e, err := openE2EE(ctx, client, path, c.Log)
	if errors.Is(err, errCryptoUnusable) {
		c.Log.Error("matrix end-to-end encryption off: encrypted rooms are skipped", "store", path, "error", err)
		return nil
	}
	if err != nil {
		return err
	}
	e.bind(client)
	c.crypto.Store(e)
	c.Log.Info("matrix end-to-end encryption on", "device", client.DeviceID, "store", path)
	return nil
}

// noE2EE says why an encrypted room is skipped.
func (c *Channel) noE2EE() string {
	switch {
	case !e2eeBuilt:
		return "this build has no end-to-end encryption (built without the goolm tag)"
	case !c.cfg.E2EEEnabled:
		return "channels.matrix.e2eeEnabled is false"
	}
	return "end-to-end encryption did not start (see the error above)"
}

// decryptEvent is the event inside an m.room.encrypted one, false when it
// cannot be read: logged with its id and dropped (a missing key is also
// asked for).
func (c *Channel) decryptEvent(ctx context.Context, room string, ev rawEvent, raw json.RawMessage) (rawEvent, bool) {
	e := c.crypto.Load()
	if e == nil {
		level := slog.LevelDebug // the room's first one is a warning, the rest are not
		if !c.warned.Add(room) {
			level = slog.LevelWarn
		}
		c.Log.Log(ctx, level, "matrix encrypted room skipped: "+c.noE2EE(), "room", room, "event_id", ev.ID, "sender", ev.Sender)
		return ev, false
	}
	if _, err := e.encrypted(ctx, room); err != nil { // learns the room's members before a reply
		c.Log.Warn("matrix encrypted room's state unknown", "room", room, "error", err)
	}
	dec, err := e.decrypt(ctx, room, raw)
	switch {
	case errors.Is(err, errUndecryptable):
		return ev, false // logged once per session, with the key request
	case err != nil:
		c.Log.Warn("matrix encrypted event dropped", "room", room, "event_id", ev.ID, "sender", ev.Sender, "error", err)
		return ev, false
	}
	return dec, true
}

// sealsFor tells whether what goes to the room is encrypted: with
// end-to-end encryption up, in a room with m.room.encryption.
func (c *Channel) sealsFor(ctx context.Context, room string) (bool, error) {
	e := c.crypto.Load()
	if e == nil {
		return false, nil
	}
	on, err := e.encrypted(ctx, room)
	if err != nil { // a room the homeserver refuses to show is refused for good
		return false, sendError("is room "+room+" encrypted", err)
	}
	return on, nil
}

// seal is an event as it goes out: encrypted in an encrypted room, as is
// elsewhere. A store that cannot tell fails the send: nothing meant for
// an encrypted room goes out in the clear.
func (c *Channel) seal(ctx context.Context, room string, typ event.Type, content *event.MessageEventContent) (event.Type, any, error) {
	on, err := c.sealsFor(ctx, room)
	if err != nil {
		return typ, nil, err
	}
	if !on {
		return typ, slim(content, maxContentBytes), nil
	}
	sealed, err := c.crypto.Load().encrypt(ctx, room, typ, slim(content, maxSealedContentBytes))
	if err != nil {
		return typ, nil, sendError("encrypt", err)
	}
	return event.EventEncrypted, sealed, nil
}
