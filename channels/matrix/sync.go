package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/nanobot-durable/nanobot/channels"
)

// syncTimeout is the /sync long poll.
const syncTimeout = 30 * time.Second

// The filters of the two kinds of sync: the first of an account takes one
// event per room (the backlog is skipped, as nanobot does), later ones the
// timeline since the saved token. Presence and account data are never read.
const (
	firstSyncFilter = `{"presence":{"not_types":["*"]},"account_data":{"not_types":["*"]},"room":{"timeline":{"limit":1},"account_data":{"not_types":["*"]},"ephemeral":{"not_types":["*"]}}}`
	syncFilter      = `{"presence":{"not_types":["*"]},"account_data":{"not_types":["*"]},"room":{"timeline":{"limit":100},"account_data":{"not_types":["*"]},"ephemeral":{"not_types":["*"]}}}`
)

// syncResponse is the part of /sync the channel reads. Events stay raw
// until each is read on its own, so one malformed event is dropped alone
// instead of failing the whole batch (and stalling the loop on it).
type syncResponse struct {
	NextBatch string `json:"next_batch"`
	Rooms     struct {
		Join map[string]struct {
			State    eventList `json:"state"`
			Timeline eventList `json:"timeline"`
		} `json:"join"`
		Invite map[string]struct {
			State eventList `json:"invite_state"`
		} `json:"invite"`
	} `json:"rooms"`
	syncCrypto
}

// syncCrypto is what end-to-end encryption reads of a sync: device
// messages (room keys), device list changes, the one-time key count.
type syncCrypto struct {
	ToDevice    eventList       `json:"to_device"`
	DeviceLists json.RawMessage `json:"device_lists"`
	OTKCount    json.RawMessage `json:"device_one_time_keys_count"`
}

type eventList struct {
	Events []json.RawMessage `json:"events"`
}

// syncState is the next_batch of one account as earlier builds saved it.
type syncState struct {
	UserID    string `json:"user_id"`
	NextBatch string `json:"next_batch"`
}

// syncLoop logs in if Start could not, then syncs until ctx ends. A failed
// batch is synced again from the same token (its handled events are in
// seen); a refused token stops the loop, as nanobot does, rather than
// hammering the homeserver.
func (c *Channel) syncLoop(ctx context.Context, loggedIn bool) {
	since, loaded := "", false
	// An answered sync resets the backoff.
	c.Reconnect(ctx, channels.Backoff{Healthy: time.Nanosecond}, func(ctx context.Context) error {
		if !loaded { // an unreadable token is retried: syncing without it would skip the backlog
			token, err := c.loadToken()
			if err != nil {
				return err
			}
			since, loaded = token, true
		}
		if !loggedIn {
			lctx, cancel := callCtx(ctx)
			err := c.login(lctx)
			cancel()
			if err != nil {
				return c.syncFailed(err, &loggedIn)
			}
			loggedIn = true
		}
		// The first sync of a (re)connection does not wait: with nothing new a
		// long poll would hold "connected" back for its whole 30 s.
		for wait := false; ctx.Err() == nil; wait = true {
			next, err := c.syncOnce(ctx, since, wait)
			if err != nil {
				return c.syncFailed(err, &loggedIn)
			}
			c.Up()
			since = next
		}
		return ctx.Err()
	})
}

// syncFailed is how a failed sync or login goes on: after the homeserver's
// rate limit, logging in again, or not at all (a refused access token).
func (c *Channel) syncFailed(err error, loggedIn *bool) error {
	switch w, limited := retryAfter(err); {
	case limited:
		return channels.RetryIn(w, fmt.Errorf("matrix sync rate limited: %w", err))
	case isAuthError(err) && c.cfg.Password == "":
		return channels.Fatal(fmt.Errorf("matrix homeserver refused channels.matrix.accessToken; the channel stops syncing: %w", err))
	case isAuthError(err):
		*loggedIn = false
		return fmt.Errorf("matrix session refused; logging in with the password again: %w", err)
	}
	return fmt.Errorf("matrix sync failed: %w", err)
}

// syncOnce is one /sync, a long poll when wait: the batch handled, then its next_batch saved.
func (c *Channel) syncOnce(ctx context.Context, since string, wait bool) (string, error) {
	first := since == ""
	query := map[string]string{"filter": syncFilter, "timeout": "0"}
	if wait {
		query["timeout"] = strconv.Itoa(int(syncTimeout / time.Millisecond))
	}
	if first {
		query = map[string]string{"filter": firstSyncFilter, "timeout": "0"}
	} else {
		query["since"] = since
	}
	api := c.api()
	var resp syncResponse
	_, err := api.MakeFullRequest(ctx, mautrix.FullRequest{
		Method:       http.MethodGet,
		URL:          api.BuildURLWithQuery(mautrix.ClientURLPath{"v3", "sync"}, query),
		ResponseJSON: &resp,
		MaxAttempts:  1,
	})
	if err != nil {
		return since, err
	}
	if resp.NextBatch == "" {
		return since, errors.New("matrix sync answered without next_batch")
	}
	if e := c.crypto.Load(); e != nil {
		e.handleSync(ctx, resp.syncCrypto, since)
	}
	if err := c.handleBatch(ctx, &resp, first); err != nil {
		return since, err
	}
	// Two gateways syncing one account each put theirs: next_batch is opaque,
	// so the last writer wins, and a batch replayed from an older token is
	// dropped by the shared seen set.
	c.cursor.Save(resp.NextBatch)
	if first {
		c.Log.Info("matrix first sync: earlier messages are not answered", "rooms", len(resp.Rooms.Join), "invites", len(resp.Rooms.Invite))
	}
	return resp.NextBatch, nil
}

// handleBatch joins the invites the allow list lets in, then hands each
// room's new events over in order. An error (the agent could not take a
// message) leaves the token where it was, so the batch comes again.
func (c *Channel) handleBatch(ctx context.Context, resp *syncResponse, first bool) error {
	for room, inv := range resp.Rooms.Invite {
		if first {
			c.backlog.Add(room) // what the inviter said before this start is backlog, answered by nobody
		}
		if err := c.onInvite(ctx, room, inv.State.Events); err != nil {
			return err
		}
	}
	me, _ := c.identity()
	for room, joined := range resp.Rooms.Join {
		for _, raw := range joined.State.Events {
			c.noteState(ctx, room, raw)
		}
		from := c.historyEnd(room, joined.Timeline.Events, me)
		for i, raw := range joined.Timeline.Events {
			c.noteState(ctx, room, raw)
			if first || i < from {
				continue
			}
			if err := c.onEvent(ctx, room, raw); err != nil {
				return err
			}
		}
	}
	return nil
}

// historyEnd is where a room's new timeline starts for the bot: a room
// just joined comes with what was said before, history not for the bot,
// but what came after the bot's invite was written for it (a user who
// invites the bot and writes at once is answered). Only the backlog of
// an invite taken in at the first start ends at the join itself.
func (c *Channel) historyEnd(room string, timeline []json.RawMessage, me id.UserID) int {
	from, invitedAt := 0, -1
	for i, raw := range timeline {
		switch ownMembership(raw, me) {
		case "invite":
			invitedAt = i
		case "join":
			from = i + 1
			if invitedAt >= 0 && !c.backlog.Has(room) {
				from = invitedAt + 1
			}
			invitedAt = -1
			c.backlog.Forget(room)
		}
	}
	return from
}

// ownMembership is the bot's new membership ("invite", "join", "leave"…)
// when the event changes it, else "". A join after a join (a new display
// name) changes nothing.
func ownMembership(raw json.RawMessage, me id.UserID) string {
	var ev struct {
		Type     string `json:"type"`
		StateKey string `json:"state_key"`
		Content  struct {
			Membership string `json:"membership"`
		} `json:"content"`
		Unsigned struct {
			Prev struct {
				Membership string `json:"membership"`
			} `json:"prev_content"`
		} `json:"unsigned"`
	}
	if json.Unmarshal(raw, &ev) != nil || ev.Type != event.StateMember.Type || ev.StateKey != string(me) ||
		ev.Content.Membership == ev.Unsigned.Prev.Membership {
		return ""
	}
	return ev.Content.Membership
}

// loadToken is the saved next_batch of this account ("" for a first start),
// from the state, else from the file earlier builds wrote.
func (c *Channel) loadToken() (string, error) {
	token, err := c.cursor.Load()
	if err != nil || token != "" {
		return token, err
	}
	var s syncState
	if !c.loadState(syncFile, &s) || s.UserID != c.cfg.UserID {
		return "", nil
	}
	return s.NextBatch, nil
}
