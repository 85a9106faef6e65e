package devicestore

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.mau.fi/whatsmeow/types"
)

// Identities and sessions: put/get/delete round trips, bulk puts, every
// device of a user deleted at once, and the PN→LID migration.
func TestIdentitiesAndSessions(t *testing.T) {
	ctx := context.Background()
	pn := types.NewJID("15550002", types.DefaultUserServer)
	lid := types.NewJID("9900002", types.HiddenUserServer)
	runCases(t, []storeCase{
		{"identity trusted on first use, then only the same key", func(t *testing.T, c *Container) {
			ok, err := c.IsTrustedIdentity(ctx, "15550002:0", [32]byte{1})
			require.NoError(t, err)
			require.True(t, ok)
			require.NoError(t, c.PutIdentity(ctx, "15550002:0", [32]byte{1}))
			ok, err = c.IsTrustedIdentity(ctx, "15550002:0", [32]byte{2})
			require.NoError(t, err)
			require.False(t, ok)
			require.NoError(t, c.PutIdentity(ctx, "15550002:0", [32]byte{2}))
			ok, err = c.IsTrustedIdentity(ctx, "15550002:0", [32]byte{2})
			require.NoError(t, err)
			require.True(t, ok, "replaced")
			require.NoError(t, c.DeleteIdentity(ctx, "15550002:0"))
			ok, err = c.IsTrustedIdentity(ctx, "15550002:0", [32]byte{9})
			require.NoError(t, err)
			require.True(t, ok, "deleted")
		}},
		{"all identities of a user, not of a longer number", func(t *testing.T, c *Container) {
			for _, addr := range []string{"15550002:0", "15550002:7", "15550002_1:0", "155500021:0"} {
				require.NoError(t, c.PutIdentity(ctx, addr, [32]byte{1}))
			}
			require.NoError(t, c.DeleteAllIdentities(ctx, "15550002"))
			for addr, kept := range map[string]bool{"15550002:0": false, "15550002:7": false, "15550002_1:0": false, "155500021:0": true} {
				ok, err := c.IsTrustedIdentity(ctx, addr, [32]byte{2})
				require.NoError(t, err)
				require.Equal(t, !kept, ok, addr)
			}
		}},
		{"session round trip", func(t *testing.T, c *Container) {
			got, err := c.GetSession(ctx, "15550002:0")
			require.NoError(t, err)
			require.Nil(t, got)
			require.NoError(t, c.PutSession(ctx, "15550002:0", []byte("s1")))
			require.NoError(t, c.PutSession(ctx, "15550002:0", []byte("s2")))
			got, err = c.GetSession(ctx, "15550002:0")
			require.NoError(t, err)
			require.Equal(t, []byte("s2"), got)
			has, err := c.HasSession(ctx, "15550002:0")
			require.NoError(t, err)
			require.True(t, has)
			require.NoError(t, c.DeleteSession(ctx, "15550002:0"))
			has, err = c.HasSession(ctx, "15550002:0")
			require.NoError(t, err)
			require.False(t, has)
		}},
		{"bulk sessions and all of a user deleted", func(t *testing.T, c *Container) {
			require.NoError(t, c.PutManySessions(ctx, map[string][]byte{
				"15550002:0": []byte("a"), "15550002:3": []byte("b"), "15550003:0": []byte("c"),
			}))
			got, err := c.GetManySessions(ctx, []string{"15550002:0", "15550002:3", "15550004:0"})
			require.NoError(t, err)
			require.Equal(t, map[string][]byte{"15550002:0": []byte("a"), "15550002:3": []byte("b"), "15550004:0": nil}, got)
			require.NoError(t, c.DeleteAllSessions(ctx, "15550002"))
			got, err = c.GetManySessions(ctx, []string{"15550002:0", "15550002:3", "15550003:0"})
			require.NoError(t, err)
			require.Equal(t, map[string][]byte{"15550002:0": nil, "15550002:3": nil, "15550003:0": []byte("c")}, got)
		}},
		{"PN to LID migration moves sessions, identities and sender keys", func(t *testing.T, c *Container) {
			require.NoError(t, c.PutSession(ctx, "15550002:0", []byte("pn0")))
			require.NoError(t, c.PutSession(ctx, "15550002:4", []byte("pn4")))
			require.NoError(t, c.PutSession(ctx, "9900002_1:4", []byte("lid4")))
			require.NoError(t, c.PutIdentity(ctx, "15550002:0", [32]byte{5}))
			require.NoError(t, c.PutSenderKey(ctx, "group@g.us", "15550002:0", []byte("sk")))
			require.NoError(t, c.MigratePNToLID(ctx, pn, lid))
			got, err := c.GetManySessions(ctx, []string{"15550002:0", "15550002:4", "9900002_1:0", "9900002_1:4"})
			require.NoError(t, err)
			require.Equal(t, map[string][]byte{"15550002:0": nil, "15550002:4": nil,
				"9900002_1:0": []byte("pn0"), "9900002_1:4": []byte("lid4")}, got, "the LID's own session wins")
			ok, err := c.IsTrustedIdentity(ctx, "9900002_1:0", [32]byte{6})
			require.NoError(t, err)
			require.False(t, ok, "the identity moved")
			sk, err := c.GetSenderKey(ctx, "group@g.us", "9900002_1:0")
			require.NoError(t, err)
			require.Equal(t, []byte("sk"), sk)
			sk, err = c.GetSenderKey(ctx, "group@g.us", "15550002:0")
			require.NoError(t, err)
			require.Nil(t, sk)
		}},
		{"sender key round trip", func(t *testing.T, c *Container) {
			sk, err := c.GetSenderKey(ctx, "group@g.us", "15550002:0")
			require.NoError(t, err)
			require.Nil(t, sk)
			require.NoError(t, c.PutSenderKey(ctx, "group@g.us", "15550002:0", []byte("k1")))
			require.NoError(t, c.PutSenderKey(ctx, "group@g.us", "15550002:0", []byte("k2")))
			require.NoError(t, c.PutSenderKey(ctx, "other@g.us", "15550002:0", []byte("k3")))
			sk, err = c.GetSenderKey(ctx, "group@g.us", "15550002:0")
			require.NoError(t, err)
			require.Equal(t, []byte("k2"), sk)
		}},
	})
}

// Pre-keys: generated on demand with fresh ids, handed out again until
// marked uploaded, counted, fetched and removed; ids never reused.
func TestPreKeys(t *testing.T) {
	ctx := context.Background()
	runCases(t, []storeCase{
		{"generate, mark uploaded, count", func(t *testing.T, c *Container) {
			first, err := c.GetOrGenPreKeys(ctx, 5)
			require.NoError(t, err)
			require.Len(t, first, 5)
			for i, k := range first {
				require.Equal(t, uint32(i+1), k.KeyID)
			}
			again, err := c.GetOrGenPreKeys(ctx, 7)
			require.NoError(t, err)
			require.Len(t, again, 7)
			require.Equal(t, first[0].Priv, again[0].Priv, "not uploaded yet: the same keys first")
			require.Equal(t, uint32(7), again[6].KeyID)
			n, err := c.UploadedPreKeyCount(ctx)
			require.NoError(t, err)
			require.Zero(t, n)
			require.NoError(t, c.MarkPreKeysAsUploaded(ctx, again[6].KeyID))
			n, err = c.UploadedPreKeyCount(ctx)
			require.NoError(t, err)
			require.Equal(t, 7, n)
			next, err := c.GetOrGenPreKeys(ctx, 2)
			require.NoError(t, err)
			require.Equal(t, []uint32{8, 9}, []uint32{next[0].KeyID, next[1].KeyID})
		}},
		{"get and remove; ids not reused", func(t *testing.T, c *Container) {
			keys, err := c.GetOrGenPreKeys(ctx, 3)
			require.NoError(t, err)
			got, err := c.GetPreKey(ctx, 3)
			require.NoError(t, err)
			require.Equal(t, *keys[2].Pub, *got.Pub, "the public half is rebuilt from the private")
			require.NoError(t, c.RemovePreKey(ctx, 3))
			got, err = c.GetPreKey(ctx, 3)
			require.NoError(t, err)
			require.Nil(t, got)
			one, err := c.GenOnePreKey(ctx)
			require.NoError(t, err)
			require.Equal(t, uint32(4), one.KeyID)
			n, err := c.UploadedPreKeyCount(ctx)
			require.NoError(t, err)
			require.Equal(t, 1, n, "a key handed out in a receipt counts as uploaded")
		}},
	})
}
