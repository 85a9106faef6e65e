package devicestore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
)

// Contacts, chat settings, message secrets and privacy tokens.
func TestContactsAndChats(t *testing.T) {
	ctx := context.Background()
	alice := types.NewJID("15550002", types.DefaultUserServer)
	aliceDevice := types.NewADJID("15550002", 0, 4)
	aliceLID := types.NewJID("9900002", types.HiddenUserServer)
	bob := types.NewJID("15550003", types.DefaultUserServer)
	runCases(t, []storeCase{
		{"push and business names report changes", func(t *testing.T, c *Container) {
			changed, prev, err := c.PutPushName(ctx, aliceDevice, "Alice")
			require.NoError(t, err)
			require.True(t, changed)
			require.Empty(t, prev)
			changed, _, err = c.PutPushName(ctx, alice, "Alice")
			require.NoError(t, err)
			require.False(t, changed, "same name, device ignored")
			changed, prev, err = c.PutPushName(ctx, alice, "Ally")
			require.NoError(t, err)
			require.True(t, changed)
			require.Equal(t, "Alice", prev)
			changed, _, err = c.PutBusinessName(ctx, alice, "Acme")
			require.NoError(t, err)
			require.True(t, changed)
			info, err := c.GetContact(ctx, alice)
			require.NoError(t, err)
			require.Equal(t, types.ContactInfo{Found: true, PushName: "Ally", BusinessName: "Acme"}, info)
		}},
		{"contact names, bulk and redacted phones", func(t *testing.T, c *Container) {
			info, err := c.GetContact(ctx, bob)
			require.NoError(t, err)
			require.False(t, info.Found)
			require.NoError(t, c.PutContactName(ctx, alice, "Alice Smith", "Alice"))
			require.NoError(t, c.PutAllContactNames(ctx, []store.ContactEntry{
				{JID: bob, FullName: "Bob Jones", FirstName: "Bob"}, {JID: alice, FullName: "Alice S.", FirstName: "Al"},
			}))
			require.NoError(t, c.PutManyRedactedPhones(ctx, []store.RedactedPhoneEntry{{JID: aliceLID, RedactedPhone: "+1∙∙∙∙02"}}))
			all, err := c.GetAllContacts(ctx)
			require.NoError(t, err)
			require.Equal(t, map[types.JID]types.ContactInfo{
				alice:    {Found: true, FullName: "Alice S.", FirstName: "Al"},
				bob:      {Found: true, FullName: "Bob Jones", FirstName: "Bob"},
				aliceLID: {Found: true, RedactedPhone: "+1∙∙∙∙02"},
			}, all)
		}},
		{"chat settings", func(t *testing.T, c *Container) {
			chat := types.NewJID("123-456", types.GroupServer)
			s, err := c.GetChatSettings(ctx, chat)
			require.NoError(t, err)
			require.False(t, s.Found)
			until := time.UnixMilli(time.Now().Add(time.Hour).UnixMilli())
			require.NoError(t, c.PutMutedUntil(ctx, chat, until))
			require.NoError(t, c.PutPinned(ctx, chat, true))
			require.NoError(t, c.PutArchived(ctx, chat, true))
			require.NoError(t, c.PutArchived(ctx, chat, false))
			s, err = c.GetChatSettings(ctx, chat)
			require.NoError(t, err)
			require.True(t, s.Found)
			require.True(t, until.Equal(s.MutedUntil))
			require.True(t, s.Pinned)
			require.False(t, s.Archived)
			require.NoError(t, c.PutMutedUntil(ctx, chat, store.MutedForever))
			s, err = c.GetChatSettings(ctx, chat)
			require.NoError(t, err)
			require.Equal(t, store.MutedForever.UnixMilli(), s.MutedUntil.UnixMilli())
			require.NoError(t, c.PutMutedUntil(ctx, chat, time.Time{}))
			s, err = c.GetChatSettings(ctx, chat)
			require.NoError(t, err)
			require.True(t, s.MutedUntil.IsZero(), "unmuted")
		}},
		{"message secrets, found under the sender's other form", func(t *testing.T, c *Container) {
			secret, _, err := c.GetMessageSecret(ctx, alice, alice, "M1")
			require.NoError(t, err)
			require.Nil(t, secret)
			require.NoError(t, c.PutMessageSecret(ctx, alice, aliceDevice, "M1", []byte("s1")))
			require.NoError(t, c.PutMessageSecret(ctx, alice, alice, "M1", []byte("other")))
			require.NoError(t, c.PutMessageSecrets(ctx, []store.MessageSecretInsert{{Chat: bob, Sender: bob, ID: "M2", Secret: []byte("s2")}}))
			secret, sender, err := c.GetMessageSecret(ctx, alice, alice, "M1")
			require.NoError(t, err)
			require.Equal(t, []byte("s1"), secret, "the first secret stays")
			require.Equal(t, alice, sender)
			secret, _, err = c.GetMessageSecret(ctx, bob, bob, "M2")
			require.NoError(t, err)
			require.Equal(t, []byte("s2"), secret)
			secret, _, err = c.GetMessageSecret(ctx, aliceLID, aliceLID, "M1")
			require.NoError(t, err)
			require.Nil(t, secret, "no LID known yet")
			require.NoError(t, c.PutLIDMapping(ctx, aliceLID, alice))
			secret, sender, err = c.GetMessageSecret(ctx, aliceLID, aliceLID, "M1")
			require.NoError(t, err)
			require.Equal(t, []byte("s1"), secret)
			require.Equal(t, alice, sender, "the sender it was recorded under")
		}},
		{"privacy tokens", func(t *testing.T, c *Container) {
			tok, err := c.GetPrivacyToken(ctx, alice)
			require.NoError(t, err)
			require.Nil(t, tok)
			at := time.Unix(1700000000, 0)
			require.NoError(t, c.PutPrivacyTokens(ctx,
				store.PrivacyToken{User: alice, Token: []byte("t1"), Timestamp: at},
				store.PrivacyToken{User: bob, Token: []byte("t2"), Timestamp: at}))
			require.NoError(t, c.PutPrivacyTokens(ctx, store.PrivacyToken{User: alice, Token: []byte("t3"), Timestamp: at.Add(time.Hour)}))
			tok, err = c.GetPrivacyToken(ctx, aliceDevice)
			require.NoError(t, err)
			require.Equal(t, []byte("t3"), tok.Token)
			require.True(t, at.Add(time.Hour).Equal(tok.Timestamp))
			require.Equal(t, alice, tok.User)
		}},
	})
}
