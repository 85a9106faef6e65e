package devicestore

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.mau.fi/whatsmeow/proto/waAdv"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

// openAt opens the store at path, closed when the test ends.
func openAt(t *testing.T, path string) *Container {
	t.Helper()
	c, err := Open(context.Background(), path, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// openTemp opens a fresh store in the test's temp dir.
func openTemp(t *testing.T) *Container {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "auth", "wa.db"))
}

// storeCase is one case of a store family's table, run on a fresh file.
type storeCase struct {
	name string
	run  func(t *testing.T, c *Container)
}

func runCases(t *testing.T, cases []storeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, openTemp(t)) })
	}
}

// pairedDevice is a new device as whatsmeow leaves it after pairing.
func pairedDevice(t *testing.T, c *Container) *types.JID {
	t.Helper()
	d := c.NewDevice()
	jid := types.NewADJID("15550001", 0, 7)
	d.ID = &jid
	d.LID = types.NewADJID("9900001", 1, 7)
	d.Platform, d.BusinessName, d.PushName = "android", "Acme", "nanobot"
	d.LIDMigrationTimestamp = 1700000000
	d.Account = &waAdv.ADVSignedDeviceIdentity{Details: []byte("details"), AccountSignature: []byte("sig")}
	require.NoError(t, d.Save(context.Background()))
	return &jid
}

// The file is 0600 (with its WAL files) under a 0700 dir; the schema is
// at SchemaVersion and opening again changes nothing.
func TestOpenFileModesAndSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "auth", "wa.db")
	c := openAt(t, path)
	pairedDevice(t, c) // a write, so the WAL exists
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(p)
		require.NoError(t, err, p)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), p)
	}
	dir, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), dir.Mode().Perm())
	var mode string
	require.NoError(t, c.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode))
	require.Equal(t, "wal", mode)
	require.NoError(t, c.Close())

	again := openAt(t, path)
	var version int
	require.NoError(t, again.db.QueryRow(`SELECT version FROM schema_version`).Scan(&version))
	require.Equal(t, SchemaVersion, version)
	require.Equal(t, 1, SchemaVersion, "one step so far")
}

// A file from a newer schema is refused with its path named, not
// downgraded.
func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wa.db")
	require.NoError(t, openAt(t, path).Close())
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE schema_version SET version = 99`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	_, err = Open(context.Background(), path, nil)
	require.ErrorContains(t, err, path)
	require.ErrorContains(t, err, "schema version 99")
}

// A restart keeps the pairing: the device saved, the file reopened, the
// same keys, JIDs and account come back; deleting it leaves a new one.
func TestDeviceSaveReopenDelete(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wa.db")
	c := openAt(t, path)
	fresh, err := c.GetFirstDevice(ctx)
	require.NoError(t, err)
	require.Nil(t, fresh.ID, "an empty file: a new, unpaired device")
	require.False(t, fresh.Initialized)
	require.Error(t, fresh.Save(ctx), "an unpaired device is not saved")
	keyless := types.NewADJID("15550001", 0, 7)
	require.ErrorContains(t, c.PutDevice(ctx, &store.Device{ID: &keyless}), "keys missing")

	d := c.NewDevice()
	jid := types.NewADJID("15550001", 0, 7)
	d.ID, d.LID, d.PushName, d.Platform = &jid, types.NewADJID("9900001", 1, 7), "nanobot", "android"
	d.Account = &waAdv.ADVSignedDeviceIdentity{Details: []byte("details")}
	require.NoError(t, d.Save(ctx))
	require.NoError(t, c.PutIdentity(ctx, "15550002:0", [32]byte{1}))
	require.NoError(t, c.PutLIDMapping(ctx, types.NewJID("9900002", types.HiddenUserServer), types.NewJID("15550002", types.DefaultUserServer)))
	require.NoError(t, c.Close())

	c = openAt(t, path)
	got, err := c.GetFirstDevice(ctx)
	require.NoError(t, err)
	require.True(t, got.Initialized)
	require.Equal(t, jid, *got.ID)
	require.Equal(t, d.LID, got.LID)
	require.Equal(t, *d.NoiseKey, *got.NoiseKey)
	require.Equal(t, *d.IdentityKey, *got.IdentityKey)
	require.Equal(t, d.SignedPreKey.KeyID, got.SignedPreKey.KeyID)
	require.Equal(t, *d.SignedPreKey.Pub, *got.SignedPreKey.Pub)
	require.Equal(t, *d.SignedPreKey.Signature, *got.SignedPreKey.Signature)
	require.Equal(t, d.RegistrationID, got.RegistrationID)
	require.Equal(t, d.AdvSecretKey, got.AdvSecretKey)
	require.True(t, proto.Equal(d.Account, got.Account))
	require.Equal(t, "nanobot", got.PushName)
	require.Equal(t, "android", got.Platform)
	require.Same(t, c, got.Identities.(*Container), "the stores are bound to the reopened file")

	require.NoError(t, got.Delete(ctx))
	require.Nil(t, got.ID)
	after, err := c.GetFirstDevice(ctx)
	require.NoError(t, err)
	require.Nil(t, after.ID, "deleted: the file holds no device")
	trusted, err := c.IsTrustedIdentity(ctx, "15550002:0", [32]byte{2})
	require.NoError(t, err)
	require.True(t, trusted, "the old account's identities went with it")
	pn, err := c.GetPNForLID(ctx, types.NewJID("9900002", types.HiddenUserServer))
	require.NoError(t, err)
	require.Equal(t, "15550002", pn.User, "the LID map, about other users, stays")
}

// Saving another account over the stored one forgets the old one's data.
func TestDeviceOtherAccountReplaces(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	pairedDevice(t, c)
	require.NoError(t, c.PutSession(ctx, "15550002:0", []byte("old")))
	d := c.NewDevice()
	other := types.NewADJID("15559999", 0, 3)
	d.ID = &other
	require.NoError(t, d.Save(ctx))
	has, err := c.HasSession(ctx, "15550002:0")
	require.NoError(t, err)
	require.False(t, has)
	got, err := c.GetFirstDevice(ctx)
	require.NoError(t, err)
	require.Equal(t, other, *got.ID)
}
