package devicestore

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.mau.fi/whatsmeow/store"
)

// App state: sync keys (the latest by timestamp), versions with their
// hash, and mutation MACs by index (newest version wins; deleting a
// version takes its MACs).
func TestAppState(t *testing.T) {
	ctx := context.Background()
	runCases(t, []storeCase{
		{"sync keys", func(t *testing.T, c *Container) {
			latest, err := c.GetLatestAppStateSyncKeyID(ctx)
			require.NoError(t, err)
			require.Nil(t, latest)
			require.NoError(t, c.PutAppStateSyncKey(ctx, []byte{1}, store.AppStateSyncKey{Data: []byte("old"), Fingerprint: []byte("f"), Timestamp: 100}))
			require.NoError(t, c.PutAppStateSyncKey(ctx, []byte{2}, store.AppStateSyncKey{Data: []byte("new"), Timestamp: 200}))
			latest, err = c.GetLatestAppStateSyncKeyID(ctx)
			require.NoError(t, err)
			require.Equal(t, []byte{2}, latest)
			key, err := c.GetAppStateSyncKey(ctx, []byte{1})
			require.NoError(t, err)
			require.Equal(t, &store.AppStateSyncKey{Data: []byte("old"), Fingerprint: []byte("f"), Timestamp: 100}, key)
			key, err = c.GetAppStateSyncKey(ctx, []byte{3})
			require.NoError(t, err)
			require.Nil(t, key)
		}},
		{"version and hash", func(t *testing.T, c *Container) {
			v, h, err := c.GetAppStateVersion(ctx, "regular")
			require.NoError(t, err)
			require.Zero(t, v)
			require.Equal(t, [128]byte{}, h)
			hash := [128]byte{0: 1, 127: 9}
			require.NoError(t, c.PutAppStateVersion(ctx, "regular", 5, hash))
			require.NoError(t, c.PutAppStateVersion(ctx, "regular", 6, hash))
			v, h, err = c.GetAppStateVersion(ctx, "regular")
			require.NoError(t, err)
			require.Equal(t, uint64(6), v)
			require.Equal(t, hash, h)
		}},
		{"mutation MACs", func(t *testing.T, c *Container) {
			require.NoError(t, c.PutAppStateMutationMACs(ctx, "regular", 1, []store.AppStateMutationMAC{
				{IndexMAC: []byte("i1"), ValueMAC: []byte("v1")}, {IndexMAC: []byte("i2"), ValueMAC: []byte("v2")},
			}))
			require.NoError(t, c.PutAppStateMutationMACs(ctx, "regular", 2, []store.AppStateMutationMAC{{IndexMAC: []byte("i1"), ValueMAC: []byte("v1b")}}))
			mac, err := c.GetAppStateMutationMAC(ctx, "regular", []byte("i1"))
			require.NoError(t, err)
			require.Equal(t, []byte("v1b"), mac, "the newest version")
			mac, err = c.GetAppStateMutationMAC(ctx, "critical_block", []byte("i1"))
			require.NoError(t, err)
			require.Nil(t, mac, "MACs are per collection")
			require.NoError(t, c.DeleteAppStateMutationMACs(ctx, "regular", [][]byte{[]byte("i1")}))
			mac, err = c.GetAppStateMutationMAC(ctx, "regular", []byte("i1"))
			require.NoError(t, err)
			require.Nil(t, mac, "every version of the index")
			mac, err = c.GetAppStateMutationMAC(ctx, "regular", []byte("i2"))
			require.NoError(t, err)
			require.Equal(t, []byte("v2"), mac)
		}},
		{"deleting a version takes its MACs", func(t *testing.T, c *Container) {
			require.NoError(t, c.PutAppStateVersion(ctx, "regular", 3, [128]byte{1}))
			require.NoError(t, c.PutAppStateMutationMACs(ctx, "regular", 3, []store.AppStateMutationMAC{{IndexMAC: []byte("i"), ValueMAC: []byte("v")}}))
			require.NoError(t, c.PutAppStateVersion(ctx, "regular_low", 4, [128]byte{2}))
			require.NoError(t, c.DeleteAppStateVersion(ctx, "regular"))
			v, _, err := c.GetAppStateVersion(ctx, "regular")
			require.NoError(t, err)
			require.Zero(t, v)
			mac, err := c.GetAppStateMutationMAC(ctx, "regular", []byte("i"))
			require.NoError(t, err)
			require.Nil(t, mac)
			v, _, err = c.GetAppStateVersion(ctx, "regular_low")
			require.NoError(t, err)
			require.Equal(t, uint64(4), v, "other collections stay")
		}},
	})
}
