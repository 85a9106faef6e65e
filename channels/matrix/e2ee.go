//go:build goolm

package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"

	"go.mau.fi/util/dbutil"
	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/crypto"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
	"maunium.net/go/mautrix/sqlstatestore"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/internal/sqlitefile"
)

// e2eeBuilt: this binary has end-to-end encryption (the goolm build tag).
const e2eeBuilt = true

// pickleKey seals the Olm account and sessions inside the store; the
// store file itself is private to the user (0600), which is the protection.
var pickleKey = []byte("nanobot matrix crypto store")

// e2ee is one device's end-to-end encryption: its Olm account, the Megolm
// sessions, the devices of the users it shares rooms with and the rooms'
// encryption state, all in one SQLite file under the nanobot home.
type e2ee struct {
	db    *dbutil.Database
	rooms *sqlstatestore.SQLStateStore
	mach  *crypto.OlmMachine
	me    id.UserID
	log   *slog.Logger
	// asked are the Megolm sessions whose keys were already requested:
	// one log line and one request per session, not one per event.
	asked  *channels.RecentKeys
	closed atomic.Bool
}

// errCryptoUnusable is a store that cannot serve this device (its keys on
// the homeserver are not the store's): retrying will not help.
var errCryptoUnusable = errors.New("matrix crypto store unusable for this device")

// openE2EE opens (or creates) the device's crypto store at path, loads or
// creates its Olm account and makes sure the homeserver has its keys.
// Each device has its own account in the file: a new login does not reuse
// another device's keys.
func openE2EE(ctx context.Context, client *mautrix.Client, path string, log *slog.Logger) (*e2ee, error) {
	raw, err := sqlitefile.Open(path, "_txlock=immediate") // a transaction that writes takes the lock at once
	if err != nil {
		return nil, fmt.Errorf("matrix crypto %w", err)
	}
	db, err := dbutil.NewWithDB(raw, "sqlite3")
	if err != nil {
		_ = raw.Close()
		return nil, fmt.Errorf("matrix crypto store %s: %w", path, err)
	}
	zl := zerologTo(log)
	e := &e2ee{db: db, me: client.UserID, log: log, asked: channels.NewRecentKeys(1024)}
	e.rooms = sqlstatestore.NewSQLStateStore(db, dbutil.ZeroLogger(zl), false)
	store := crypto.NewSQLCryptoStore(db, dbutil.ZeroLogger(zl), string(client.UserID)+"|"+string(client.DeviceID), client.DeviceID, pickleKey)
	if err := e.rooms.Upgrade(ctx); err != nil {
		e.close()
		return nil, fmt.Errorf("matrix crypto store %s: room state schema: %w", path, err)
	}
	if err := store.DB.Upgrade(ctx); err != nil {
		e.close()
		return nil, fmt.Errorf("matrix crypto store %s: crypto schema: %w", path, err)
	}
	e.mach = crypto.NewOlmMachine(client, &zl, store, e.rooms)
	// Megolm keys go to every device of the room's members, verified or
	// not, as nanobot sends (ignore_unverified_devices).
	e.mach.SendKeysMinTrust = id.TrustStateUnset
	if err := e.mach.Load(ctx); err != nil {
		e.close()
		return nil, fmt.Errorf("matrix crypto store %s: load the Olm account: %w", path, err)
	}
	if err := e.publishKeys(ctx, client); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

// publishKeys uploads the device's identity and one-time keys the first
// time, and checks on later starts that the homeserver still has the
// store's keys (a deleted store with a reused device cannot be repaired).
func (e *e2ee) publishKeys(ctx context.Context, client *mautrix.Client) error {
	resp, err := client.QueryKeys(ctx, &mautrix.ReqQueryKeys{
		DeviceKeys: map[id.UserID]mautrix.DeviceIDList{client.UserID: {client.DeviceID}},
	})
	if err != nil {
		return fmt.Errorf("matrix crypto: query the device's own keys: %w", err)
	}
	shared := e.mach.GetAccount().Shared
	device, onServer := resp.DeviceKeys[client.UserID][client.DeviceID]
	switch {
	case !onServer || len(device.Keys) == 0:
		if err := e.mach.ShareKeys(ctx, -1); err != nil {
			return fmt.Errorf("matrix crypto: upload the device keys: %w", err)
		}
		e.log.Info("matrix end-to-end encryption: device keys uploaded", "device", client.DeviceID, "fingerprint", e.mach.Fingerprint())
	case !shared:
		return fmt.Errorf("%w: device %s already has keys on the homeserver that this store did not make (log in with a new device, or restore the store)", errCryptoUnusable, client.DeviceID)
	case device.Keys.GetEd25519(client.DeviceID) != e.mach.OwnIdentity().SigningKey:
		return fmt.Errorf("%w: device %s's signing key on the homeserver is not the store's", errCryptoUnusable, client.DeviceID)
	}
	return nil
}

func (e *e2ee) close() {
	if !e.closed.Swap(true) && e.db != nil {
		_ = e.db.Close()
	}
}

// usable tells whether the store is still open (a Stop closes it).
func (e *e2ee) usable() bool { return !e.closed.Load() }

// device is the device the store serves.
func (e *e2ee) device() id.DeviceID { return e.mach.Client.DeviceID }

// handleSync takes a sync's device messages (room keys, key requests),
// device list changes and one-time key count, before its room events so
// a key sent with a message is there to decrypt it.
func (e *e2ee) handleSync(ctx context.Context, part syncCrypto, since string) {
	resp := &mautrix.RespSync{}
	if len(part.DeviceLists) > 0 && json.Unmarshal(part.DeviceLists, &resp.DeviceLists) != nil {
		e.log.Warn("matrix sync: malformed device_lists dropped")
	}
	if len(part.OTKCount) > 0 && json.Unmarshal(part.OTKCount, &resp.DeviceOTKCount) != nil {
		e.log.Warn("matrix sync: malformed device_one_time_keys_count dropped")
	}
	for _, raw := range part.ToDevice.Events {
		var evt event.Event
		if err := json.Unmarshal(raw, &evt); err != nil || evt.Type.Type == "" {
			e.log.Warn("matrix to-device event dropped", "type", evt.Type.Type, "sender", evt.Sender, "error", err)
			continue
		}
		resp.ToDevice.Events = append(resp.ToDevice.Events, &evt)
	}
	e.mach.ProcessSyncResponse(ctx, resp, since)
}

// noteState keeps the room's encryption and membership (whom to share
// keys with), and forgets the room's outgoing session when a member leaves
// or the history visibility changes.
func (e *e2ee) noteState(ctx context.Context, room string, raw json.RawMessage) {
	var evt event.Event
	if json.Unmarshal(raw, &evt) != nil || evt.StateKey == nil {
		return
	}
	evt.RoomID, evt.Type.Class = id.RoomID(room), event.StateEventType
	if evt.Content.ParseRaw(evt.Type) != nil {
		return
	}
	if evt.Unsigned.PrevContent != nil {
		_ = evt.Unsigned.PrevContent.ParseRaw(evt.Type)
	}
	mautrix.UpdateStateStore(ctx, e.rooms, &evt)
	switch evt.Type {
	case event.StateMember:
		e.mach.HandleMemberEvent(ctx, &evt)
	case event.StateHistoryVisibility:
		// mautrix's handler dereferences the session when the store fails
		// to read it: read it first, and leave the event if it cannot be.
		if _, err := e.mach.CryptoStore.GetOutboundGroupSession(ctx, evt.RoomID); err != nil {
			e.log.Warn("matrix crypto store: history visibility change not applied", "room", room, "event_id", evt.ID, "error", err)
			return
		}
		e.mach.HandleHistoryVisibility(ctx, &evt)
	}
}

// errUndecryptable is an encrypted event the device has no key for;
// errForged one whose key came from another device than it claims.
var (
	errUndecryptable = errors.New("no room key for the event")
	errForged        = errors.New("forged room key")
)

// decrypt is the event inside an m.room.encrypted one. Without the
// Megolm session the senders' devices (and the bot's own) are asked for
// its key once, and the event is dropped: nanobot does not answer what it
// cannot read either.
func (e *e2ee) decrypt(ctx context.Context, room string, raw json.RawMessage) (rawEvent, error) {
	var evt event.Event
	if err := json.Unmarshal(raw, &evt); err != nil {
		return rawEvent{}, fmt.Errorf("malformed encrypted event: %w", err)
	}
	evt.RoomID = id.RoomID(room)
	if err := evt.Content.ParseRaw(event.EventEncrypted); err != nil {
		return rawEvent{}, fmt.Errorf("malformed encrypted content: %w", err)
	}
	content := evt.Content.AsEncrypted()
	dec, err := e.mach.DecryptMegolmEvent(ctx, &evt)
	if errors.Is(err, crypto.ErrNoSessionFound) {
		if !e.asked.Add(string(content.SessionID)) {
			e.requestKey(ctx, &evt, content)
		}
		return rawEvent{}, fmt.Errorf("%w (session %s)", errUndecryptable, content.SessionID)
	}
	if err != nil {
		return rawEvent{}, err
	}
	if dec.Mautrix.TrustState == id.TrustStateDeviceKeyMismatch {
		return rawEvent{}, fmt.Errorf("the room key's sender is not the device it names: %w", errForged)
	}
	return rawEvent{ID: string(evt.ID), Type: dec.Type.Type, Sender: string(evt.Sender), TS: evt.Timestamp, Content: dec.Content.VeryRaw}, nil
}

// requestKey asks the sender's devices and the bot's own for a session's key.
func (e *e2ee) requestKey(ctx context.Context, evt *event.Event, content *event.EncryptedEventContent) {
	from := map[id.UserID][]id.DeviceID{evt.Sender: {"*"}, e.me: {"*"}}
	err := e.mach.SendRoomKeyRequest(ctx, evt.RoomID, content.SenderKey, content.SessionID, "", from)
	e.log.Warn("matrix encrypted message not decrypted: the bot has no key for it and asked the sender's devices for one; the message is not answered",
		"room", evt.RoomID, "event_id", evt.ID, "sender", evt.Sender, "session_id", content.SessionID, "request_error", err)
}

// encrypted tells whether the room has m.room.encryption. A room whose
// state the store has not seen (just joined, its sync not handled yet; or
// joined before this build) is read from the homeserver first, into the
// store: nothing goes out in the clear for want of knowing.
func (e *e2ee) encrypted(ctx context.Context, room string) (bool, error) {
	create, err := e.rooms.GetCreate(ctx, id.RoomID(room))
	if err != nil {
		return false, err
	}
	if create == nil {
		if _, err := e.mach.Client.State(ctx, id.RoomID(room)); err != nil {
			return false, fmt.Errorf("matrix room state of %s: %w", room, err)
		}
	}
	return e.rooms.IsEncrypted(ctx, id.RoomID(room))
}

// bind makes the store the client's state store: the room state it reads
// and its joins land there.
func (e *e2ee) bind(client *mautrix.Client) { client.StateStore = e.rooms }

// encrypt seals an event for an encrypted room, sharing a new Megolm
// session with the room's members' devices first when there is none.
func (e *e2ee) encrypt(ctx context.Context, room string, typ event.Type, content any) (*event.EncryptedEventContent, error) {
	sealed, err := e.mach.EncryptMegolmEvent(ctx, id.RoomID(room), typ, content)
	if err == nil || !crypto.IsShareError(err) {
		return sealed, err
	}
	users, err := e.rooms.GetRoomJoinedOrInvitedMembers(ctx, id.RoomID(room))
	if err != nil {
		return nil, fmt.Errorf("matrix crypto: members of %s: %w", room, err)
	}
	// A room just joined may not have its members in the store yet: a new
	// session's key must still reach them, so ask the homeserver too.
	if joined, err := e.mach.Client.JoinedMembers(ctx, id.RoomID(room)); err == nil {
		for u := range joined.Joined {
			if !slices.Contains(users, u) {
				users = append(users, u)
			}
		}
	} else {
		e.log.Warn("matrix crypto: the room's joined members from the homeserver", "room", room, "error", err)
	}
	if err := e.mach.ShareGroupSession(ctx, id.RoomID(room), users); err != nil {
		return nil, fmt.Errorf("matrix crypto: share the room key of %s: %w", room, err)
	}
	return e.mach.EncryptMegolmEvent(ctx, id.RoomID(room), typ, content)
}
