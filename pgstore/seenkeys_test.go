package pgstore_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/pgstore"
)

// TestAClaimIsRenewedWhileItsHolderLives: the holder's own timer renews a
// claim until it is done, so a hand-over longer than the lease keeps it.
func TestAClaimIsRenewedWhileItsHolderLives(t *testing.T) {
	url := pgtest.Database(t)
	var ahead atomic.Int64
	lease := pgstore.Lease{Length: time.Minute, Every: 20 * time.Millisecond,
		Ahead: func() time.Duration { return time.Duration(ahead.Load()) }}
	holder := open(t, url).SeenKeys("matrix-events", 10, lease)
	other := open(t, url).SeenKeys("matrix-events", 10, lease)
	require.True(t, holder.Claim("ev-1"))
	db := open(t, url)
	until := func() time.Time {
		var at time.Time
		require.NoError(t, db.Pool().QueryRow(context.Background(),
			`SELECT claimed_until FROM channel_keys WHERE key = 'ev-1'`).Scan(&at))
		return at
	}
	first := until()
	for range 3 { // three times most of a lease: the claim holds only if renewed each time
		ahead.Add(int64(40 * time.Second))
		before := until()
		require.Eventually(t, func() bool { return until().After(before) }, 10*time.Second, 10*time.Millisecond, "the claim was not renewed")
	}
	require.False(t, other.Claim("ev-1"), "the claim holds past its first lease")
	require.True(t, until().Sub(first) >= 2*time.Minute)
	holder.Done("ev-1")
	ahead.Add(int64(10 * time.Minute))
	require.False(t, other.Claim("ev-1"), "handled")
}
