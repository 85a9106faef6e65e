package whatsapp

import (
	"context"
	"database/sql"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/whatsapp/devicestore"
)

// The real device store opens: a SQLite file under the home, directory
// 0700 and file 0600, the store's schema in it, and no device paired.
func TestStoreOpensRealSQLite(t *testing.T) {
	home := t.TempDir()
	path := Config{}.storePath(home)
	require.Equal(t, filepath.Join(home, "whatsapp-auth", "whatsmeow.db"), path)
	client, err := openWhatsmeow(context.Background(), path, slog.Default())
	require.NoError(t, err)
	require.False(t, client.Paired(), "a new store holds no device")
	require.NoError(t, client.Close())
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	require.Positive(t, st.Size(), "the schema was written")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	var version int
	require.NoError(t, db.QueryRow("SELECT version FROM schema_version").Scan(&version))
	require.Equal(t, devicestore.SchemaVersion, version, "the store's schema, at its latest version")
	require.NoError(t, db.Close())
	dir, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), dir.Mode().Perm())
	// opened again: the schema is current, nothing to upgrade
	client, err = openWhatsmeow(context.Background(), path, slog.Default())
	require.NoError(t, err)
	require.NoError(t, client.Close())
}

// A store that is no SQLite file fails with its path named.
func TestStoreBrokenFileNamed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "auth", "broken.db")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte("this is not a database, not even close to one......................................................"), 0o600))
	_, err := openWhatsmeow(context.Background(), path, slog.Default())
	require.ErrorContains(t, err, path)
}

// The channel on the real, empty store: Start succeeds, the channel is
// down and tells to pair (databasePath honoured).
func TestChannelOnEmptyRealStore(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "wa", "device.db")
	deps, logs := depsFor(t, map[string]any{"databasePath": dbPath})
	ch, err := New(deps)
	require.NoError(t, err)
	require.NoError(t, ch.Start(context.Background(), channeltest.NewPublisher(t).Publish))
	require.False(t, ch.Connected())
	require.Contains(t, logs.String(), "run `nanobot channels login whatsapp`")
	require.Contains(t, ch.Describe(), dbPath)
	require.FileExists(t, dbPath)
	stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, ch.Stop(stop))
}
