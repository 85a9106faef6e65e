//go:build goolm

// Package e2eeclient is a Matrix user whose client encrypts as Element
// does, for tests against dendritepeer's homeserver: mautrix's client
// syncing with an Olm machine of its own (pure Go, the goolm build tag),
// its keys in a SQLite file of its own.
package e2eeclient

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
	"go.mau.fi/util/dbutil"
	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/crypto"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
	"maunium.net/go/mautrix/sqlstatestore"

	"github.com/nanobot-durable/nanobot/channels/matrix/dendritepeer"
	"github.com/nanobot-durable/nanobot/internal/sqlitefile"
)

// wait bounds a wait for the homeserver; pollEvery is its poll.
const (
	wait      = 30 * time.Second
	pollEvery = 20 * time.Millisecond
)

// Client is one user's encrypting client.
type Client struct {
	t     testing.TB
	user  *dendritepeer.User
	cli   *mautrix.Client
	mach  *crypto.OlmMachine
	rooms *sqlstatestore.SQLStateStore

	mu          sync.Mutex
	sealed      map[id.EventID]bool // events that arrived as m.room.encrypted
	decrypted   []*event.Event      // their contents, in order
	keyRequests []id.SessionID      // sessions other devices asked this one for
	pending     sync.WaitGroup      // events waiting for their room key
}

// New gives a registered user an encrypting client, syncing until the
// test ends.
func New(t testing.TB, hs *dendritepeer.Homeserver, u *dendritepeer.User) *Client {
	t.Helper()
	ctx := context.Background()
	cli, err := mautrix.NewClient(hs.URL, id.UserID(u.ID), u.Token)
	require.NoError(t, err)
	cli.DeviceID = id.DeviceID(u.DeviceID)
	raw, err := sqlitefile.Open(filepath.Join(t.TempDir(), "client-crypto.db"), "_txlock=immediate")
	require.NoError(t, err)
	db, err := dbutil.NewWithDB(raw, "sqlite3")
	require.NoError(t, err)
	rooms := sqlstatestore.NewSQLStateStore(db, dbutil.NoopLogger, false)
	require.NoError(t, rooms.Upgrade(ctx))
	store := crypto.NewSQLCryptoStore(db, dbutil.NoopLogger, u.ID, cli.DeviceID, []byte("test client"))
	require.NoError(t, store.DB.Upgrade(ctx))
	cli.StateStore = rooms
	nop := zerolog.Nop()
	mach := crypto.NewOlmMachine(cli, &nop, store, rooms)
	require.NoError(t, mach.Load(ctx))
	require.NoError(t, mach.ShareKeys(ctx, -1))
	c := &Client{t: t, user: u, cli: cli, mach: mach, rooms: rooms, sealed: map[id.EventID]bool{}}

	syncer := cli.Syncer.(*mautrix.DefaultSyncer)
	syncer.OnSync(mach.ProcessSyncResponse)
	syncer.OnEventType(event.StateMember, mach.HandleMemberEvent)
	syncer.OnEvent(cli.StateStoreSyncHandler)
	syncer.OnEventType(event.EventEncrypted, c.onEncrypted)
	syncer.OnEventType(event.ToDeviceRoomKeyRequest, func(_ context.Context, evt *event.Event) {
		if req := evt.Content.AsRoomKeyRequest(); req.Action == event.KeyRequestActionRequest {
			c.mu.Lock()
			c.keyRequests = append(c.keyRequests, req.Body.SessionID)
			c.mu.Unlock()
		}
	})
	syncCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cli.SyncWithContext(syncCtx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		c.pending.Wait()
		_ = db.Close()
	})
	return c
}

// onEncrypted keeps what an encrypted event says. An event whose key has
// not come yet waits for it off the sync loop: the key comes in a later
// sync, which a handler blocking the loop would never let in.
func (c *Client) onEncrypted(ctx context.Context, evt *event.Event) {
	c.mu.Lock()
	c.sealed[evt.ID] = true
	c.mu.Unlock()
	dec, err := c.mach.DecryptMegolmEvent(ctx, evt)
	if errors.Is(err, crypto.ErrNoSessionFound) {
		c.pending.Add(1)
		go c.decryptWhenKeyed(ctx, evt)
		return
	}
	c.keep(dec, err, evt)
}

// decryptWhenKeyed decrypts evt once its room key arrives (or says it never did).
func (c *Client) decryptWhenKeyed(ctx context.Context, evt *event.Event) {
	defer c.pending.Done()
	content := evt.Content.AsEncrypted()
	var dec *event.Event
	err := crypto.ErrNoSessionFound
	if c.mach.WaitForSession(ctx, evt.RoomID, content.SenderKey, content.SessionID, wait) {
		dec, err = c.mach.DecryptMegolmEvent(ctx, evt)
	}
	if ctx.Err() != nil {
		return // the client stopped: the test is over
	}
	c.keep(dec, err, evt)
}

// keep records a decrypted event, or logs why evt could not be.
func (c *Client) keep(dec *event.Event, err error, evt *event.Event) {
	if err != nil {
		c.t.Logf("%s could not decrypt %s: %v", c.user.ID, evt.ID, err)
		return
	}
	c.mu.Lock()
	c.decrypted = append(c.decrypted, dec)
	c.mu.Unlock()
}

// CreateEncryptedDM opens a direct room with m.room.encryption and invites other.
func (c *Client) CreateEncryptedDM(other *dendritepeer.User) id.RoomID {
	c.t.Helper()
	resp, err := c.cli.CreateRoom(context.Background(), &mautrix.ReqCreateRoom{
		Preset: "trusted_private_chat", IsDirect: true, Invite: []id.UserID{id.UserID(other.ID)},
		InitialState: []*event.Event{{
			Type:    event.StateEncryption,
			Content: event.Content{Parsed: &event.EncryptionEventContent{Algorithm: id.AlgorithmMegolmV1}},
		}},
	})
	require.NoError(c.t, err)
	require.Eventually(c.t, func() bool {
		on, err := c.rooms.IsEncrypted(context.Background(), resp.RoomID)
		return err == nil && on
	}, wait, pollEvery, "the client's sync never showed the room encrypted")
	return resp.RoomID
}

// SendText sends an encrypted text; to is whom its room key is shared
// with (nil: the room's members, as a client does). It returns the
// event's id and its Megolm session.
func (c *Client) SendText(room id.RoomID, text string, to ...id.UserID) (id.EventID, id.SessionID) {
	c.t.Helper()
	return c.Send(room, &event.MessageEventContent{MsgType: event.MsgText, Body: text}, to...)
}

// Send encrypts a message's content for the room and sends it.
func (c *Client) Send(room id.RoomID, content *event.MessageEventContent, to ...id.UserID) (id.EventID, id.SessionID) {
	c.t.Helper()
	ctx := context.Background()
	if to == nil {
		members, err := c.rooms.GetRoomJoinedOrInvitedMembers(ctx, room)
		require.NoError(c.t, err)
		to = members
	}
	sealed, err := c.mach.EncryptMegolmEvent(ctx, room, event.EventMessage, content)
	if crypto.IsShareError(err) {
		require.NoError(c.t, c.mach.ShareGroupSession(ctx, room, to))
		sealed, err = c.mach.EncryptMegolmEvent(ctx, room, event.EventMessage, content)
	}
	require.NoError(c.t, err)
	resp, err := c.cli.SendMessageEvent(ctx, room, event.EventEncrypted, sealed)
	require.NoError(c.t, err)
	return resp.EventID, sealed.SessionID
}

// WaitFrom waits for the n-th message (1-based) that sender's device
// encrypted for this one, and returns it decrypted.
func (c *Client) WaitFrom(sender *dendritepeer.User, n int) *event.Event {
	c.t.Helper()
	var got *event.Event
	require.Eventually(c.t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		seen := 0
		for _, evt := range c.decrypted {
			if evt.Sender == id.UserID(sender.ID) && evt.Type == event.EventMessage {
				if seen++; seen == n {
					got = evt
					return c.sealed[evt.ID]
				}
			}
		}
		return false
	}, wait, pollEvery, "no encrypted message %d from %s", n, sender.ID)
	return got
}

// AskedFor tells whether another device asked this one for the session's key.
func (c *Client) AskedFor(session id.SessionID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.keyRequests {
		if s == session {
			return true
		}
	}
	return false
}

// Shown is what the sender's newest message in the room shows once its
// edits (m.replace) are applied, and how many edits it had.
func (c *Client) Shown(room id.RoomID, sender *dendritepeer.User) (string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var newest id.EventID
	text, edits := "", 0
	for _, evt := range c.decrypted {
		msg := evt.Content.AsMessage()
		if evt.RoomID != room || evt.Sender != id.UserID(sender.ID) || evt.Type != event.EventMessage {
			continue
		}
		if rel := msg.RelatesTo; rel != nil && rel.Type == event.RelReplace {
			if rel.EventID == newest && msg.NewContent != nil {
				text, edits = msg.NewContent.Body, edits+1
			}
			continue
		}
		newest, text, edits = evt.ID, msg.Body, 0
	}
	return text, edits
}
