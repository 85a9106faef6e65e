package devicestore

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
)

// The LID↔phone map, both ways, devices kept, one pair per user.
func TestLIDMap(t *testing.T) {
	ctx := context.Background()
	lid := func(u string, dev uint16) types.JID {
		return types.JID{User: u, Device: dev, Server: types.HiddenUserServer}
	}
	pn := func(u string, dev uint16) types.JID {
		return types.JID{User: u, Device: dev, Server: types.DefaultUserServer}
	}
	runCases(t, []storeCase{
		{"both ways, with the device", func(t *testing.T, c *Container) {
			got, err := c.GetPNForLID(ctx, lid("9900002", 0))
			require.NoError(t, err)
			require.True(t, got.IsEmpty())
			require.NoError(t, c.PutLIDMapping(ctx, lid("9900002", 0), pn("15550002", 0)))
			got, err = c.GetPNForLID(ctx, lid("9900002", 3))
			require.NoError(t, err)
			require.Equal(t, pn("15550002", 3), got)
			got, err = c.GetLIDForPN(ctx, pn("15550002", 5))
			require.NoError(t, err)
			require.Equal(t, lid("9900002", 5), got)
		}},
		{"a new pair replaces both sides' old ones", func(t *testing.T, c *Container) {
			require.NoError(t, c.PutLIDMapping(ctx, lid("9900002", 0), pn("15550002", 0)))
			require.NoError(t, c.PutLIDMapping(ctx, lid("9900009", 0), pn("15550002", 0)))
			got, err := c.GetPNForLID(ctx, lid("9900002", 0))
			require.NoError(t, err)
			require.True(t, got.IsEmpty(), "the number moved to another LID")
			got, err = c.GetLIDForPN(ctx, pn("15550002", 0))
			require.NoError(t, err)
			require.Equal(t, "9900009", got.User)
		}},
		{"bulk put and many lookups", func(t *testing.T, c *Container) {
			require.NoError(t, c.PutManyLIDMappings(ctx, []store.LIDMapping{
				{LID: lid("9900002", 0), PN: pn("15550002", 0)}, {LID: lid("9900003", 0), PN: pn("15550003", 0)},
			}))
			got, err := c.GetManyLIDsForPNs(ctx, []types.JID{pn("15550002", 1), pn("15550003", 0), pn("15550004", 0)})
			require.NoError(t, err)
			require.Equal(t, map[types.JID]types.JID{pn("15550002", 1): lid("9900002", 1), pn("15550003", 0): lid("9900003", 0)}, got)
		}},
		{"wrong servers refused, nothing half-written", func(t *testing.T, c *Container) {
			require.Error(t, c.PutLIDMapping(ctx, pn("15550002", 0), lid("9900002", 0)))
			err := c.PutManyLIDMappings(ctx, []store.LIDMapping{
				{LID: lid("9900002", 0), PN: pn("15550002", 0)}, {LID: pn("1", 0), PN: pn("2", 0)},
			})
			require.Error(t, err)
			got, err := c.GetLIDForPN(ctx, pn("15550002", 0))
			require.NoError(t, err)
			require.True(t, got.IsEmpty(), "the bulk put is one transaction")
		}},
	})
}
