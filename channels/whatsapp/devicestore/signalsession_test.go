package devicestore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.mau.fi/libsignal/ecc"
	"go.mau.fi/libsignal/keys/identity"
	"go.mau.fi/libsignal/keys/prekey"
	"go.mau.fi/libsignal/protocol"
	"go.mau.fi/libsignal/session"
	"go.mau.fi/libsignal/util/optional"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
)

// The stores under whatsmeow's real Signal code: Alice starts a session
// from Bob's pre-key bundle, Bob (his file reopened, as after a restart)
// decrypts and answers, Alice (hers reopened) decrypts the answer. The
// one-time pre-key is used up.
func TestSignalSessionAcrossRestarts(t *testing.T) {
	ctx := context.Background()
	ser := store.SignalProtobufSerializer
	dir := t.TempDir()
	alicePath, bobPath := filepath.Join(dir, "alice.db"), filepath.Join(dir, "bob.db")
	aliceJID, bobJID := types.NewADJID("15550001", 0, 2), types.NewADJID("15550002", 0, 3)
	paired := func(path string, jid types.JID) *store.Device {
		c := openAt(t, path)
		d := c.NewDevice()
		d.ID = &jid
		require.NoError(t, d.Save(ctx))
		return d
	}
	reopened := func(path string) *store.Device {
		d, err := openAt(t, path).GetFirstDevice(ctx)
		require.NoError(t, err)
		return d
	}

	bob := paired(bobPath, bobJID)
	pks, err := bob.PreKeys.GetOrGenPreKeys(ctx, 1)
	require.NoError(t, err)
	pk := pks[0]
	bundle := prekey.NewBundle(bob.RegistrationID, uint32(bobJID.Device), optional.NewOptionalUint32(pk.KeyID),
		bob.SignedPreKey.KeyID, ecc.NewDjbECPublicKey(*pk.Pub), ecc.NewDjbECPublicKey(*bob.SignedPreKey.Pub),
		*bob.SignedPreKey.Signature, identity.NewKey(ecc.NewDjbECPublicKey(*bob.IdentityKey.Pub)))
	require.NoError(t, bob.Container.(*Container).Close())

	alice := paired(alicePath, aliceJID)
	toBob := session.NewBuilderFromSignal(alice, bobJID.SignalAddress(), ser)
	require.NoError(t, toBob.ProcessBundle(ctx, bundle))
	hello, err := session.NewCipher(toBob, bobJID.SignalAddress()).Encrypt(ctx, []byte("hello"))
	require.NoError(t, err)
	require.Equal(t, uint32(protocol.PREKEY_TYPE), hello.Type())
	require.NoError(t, alice.Container.(*Container).Close())

	bob = reopened(bobPath)
	fromAlice := session.NewCipher(session.NewBuilderFromSignal(bob, aliceJID.SignalAddress(), ser), aliceJID.SignalAddress())
	msg, err := protocol.NewPreKeySignalMessageFromBytes(hello.Serialize(), ser.PreKeySignalMessage, ser.SignalMessage)
	require.NoError(t, err)
	plain, err := fromAlice.DecryptMessage(ctx, msg)
	require.NoError(t, err)
	require.Equal(t, "hello", string(plain))
	used, err := bob.PreKeys.GetPreKey(ctx, pk.KeyID)
	require.NoError(t, err)
	require.Nil(t, used, "the one-time pre-key is used up")
	reply, err := fromAlice.Encrypt(ctx, []byte("hi"))
	require.NoError(t, err)
	require.Equal(t, uint32(protocol.WHISPER_TYPE), reply.Type(), "the session is established")

	alice = reopened(alicePath)
	fromBob := session.NewCipher(session.NewBuilderFromSignal(alice, bobJID.SignalAddress(), ser), bobJID.SignalAddress())
	answer, err := protocol.NewSignalMessageFromBytes(reply.Serialize(), ser.SignalMessage)
	require.NoError(t, err)
	plain, err = fromBob.Decrypt(ctx, answer)
	require.NoError(t, err)
	require.Equal(t, "hi", string(plain))
}
