package pgstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/media"
	"github.com/nanobot-durable/nanobot/memory"
	"github.com/nanobot-durable/nanobot/owner"
	"github.com/nanobot-durable/nanobot/pairing"
	"github.com/nanobot-durable/nanobot/pgstore"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/storetest"
	"github.com/nanobot-durable/nanobot/usage"
)

// open connects one more pool to url: another host on the same database.
func open(t *testing.T, url string) *pgstore.DB {
	t.Helper()
	db, err := pgstore.Open(context.Background(), url, nil)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	return db
}

func TestSessionsContract(t *testing.T) {
	storetest.Sessions(t, func(t *testing.T) storetest.Open[session.Store] {
		url := pgtest.Database(t)
		return func(t *testing.T) session.Store { return open(t, url).Sessions() }
	})
}

func TestUsageContract(t *testing.T) {
	storetest.Usage(t, func(t *testing.T) storetest.Open[usage.Store] {
		url := pgtest.Database(t)
		return func(t *testing.T) usage.Store { return open(t, url).Usage() }
	})
}

func TestPairingContract(t *testing.T) {
	storetest.Pairing(t, func(t *testing.T) storetest.Open[*pairing.Store] {
		url := pgtest.Database(t)
		return func(t *testing.T) *pairing.Store { return open(t, url).Pairing() }
	})
}

func TestArchiveContract(t *testing.T) {
	storetest.Archive(t, func(t *testing.T) storetest.Open[memory.Archive] {
		url := pgtest.Database(t)
		return func(t *testing.T) memory.Archive { return open(t, url).Archive() }
	})
}

// TestSeenKeysContract: each open is another gateway on the database; the
// lease's clock is moved, and renewals come only when the contract asks.
func TestSeenKeysContract(t *testing.T) {
	var ahead atomic.Int64
	lease := pgstore.Lease{Length: pgstore.DefaultClaimLease, Every: time.Hour,
		Ahead: func() time.Duration { return time.Duration(ahead.Load()) }}
	var url string
	var gateways atomic.Int64
	storetest.SeenKeys(t, func(t *testing.T) storetest.Open[channels.SeenKeys] {
		url = pgtest.Database(t)
		return func(t *testing.T) channels.SeenKeys {
			db := open(t, url)
			other := db.SeenKeys("telegram-other", storetest.SeenKeysSize, pgstore.Lease{})
			other.Add("10", "11", "12") // sets are apart
			gateway := lease
			gateway.Holder = fmt.Sprint("host-", gateways.Add(1), ":/home")
			return db.SeenKeys("telegram-updates", storetest.SeenKeysSize, gateway)
		}
	}, &storetest.SeenLease{
		Length: lease.Length,
		Pass:   func(d time.Duration) { ahead.Add(int64(d)) },
		Renew:  func(set channels.SeenKeys) { set.(*pgstore.SeenKeys).RenewClaims() },
		Restarted: func(t *testing.T, set channels.SeenKeys) channels.SeenKeys {
			return open(t, url).SeenKeys("telegram-updates", storetest.SeenKeysSize, set.(*pgstore.SeenKeys).Lease())
		},
	})
}

func TestMediaContract(t *testing.T) {
	storetest.Media(t, func(t *testing.T) storetest.Open[storetest.MediaHost] {
		url := pgtest.Database(t)
		return func(t *testing.T) storetest.MediaHost { // another host, holding its own workspace
			ws := t.TempDir()
			return storetest.MediaHost{Store: open(t, url).Media("default", ws, media.Dir(ws)), Workspace: ws}
		}
	}, true)
}

func TestOwnerKeyContract(t *testing.T) {
	storetest.OwnerKey(t, func(t *testing.T) storetest.Open[owner.Store] {
		url := pgtest.Database(t)
		return func(t *testing.T) owner.Store {
			db := open(t, url)
			other, err := owner.NewKey()
			require.NoError(t, err)
			_, err = db.OwnerKey("other-instance").Adopt(context.Background(), other) // instances are apart
			require.NoError(t, err)
			return db.OwnerKey("default")
		}
	})
}

// TestChannelStateContract: each open is another gateway on the database.
func TestChannelStateContract(t *testing.T) {
	storetest.ChannelState(t, func(t *testing.T) storetest.Open[func(string) channels.StateStore] {
		url := pgtest.Database(t)
		return func(t *testing.T) func(string) channels.StateStore {
			db := open(t, url)
			return func(channel string) channels.StateStore { return db.ChannelState("default", channel) }
		}
	}, true)
}
