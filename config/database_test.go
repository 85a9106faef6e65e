package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDatabaseURLFromConfigOrEnvironment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"database": {"url": "postgres://nb@db.example:5432/nanobot"}}`), 0o600))
	cfg, warnings, err := LoadWithEnv(path, nil)
	require.NoError(t, err)
	require.Empty(t, warnings, "database is a known key")
	require.Equal(t, "postgres://nb@db.example:5432/nanobot", cfg.Database.URL)
	require.Equal(t, "config "+path, cfg.Database.Source())

	cfg, _, err = LoadWithEnv(path, []string{DatabaseURLVar + "=postgresql://other@127.0.0.1/x"})
	require.NoError(t, err)
	require.Equal(t, "postgresql://other@127.0.0.1/x", cfg.Database.URL, "the variable wins")
	require.Equal(t, "env "+DatabaseURLVar, cfg.Database.Source())

	cfg, _, err = LoadWithEnv(filepath.Join(t.TempDir(), "none.json"), nil)
	require.NoError(t, err)
	require.Empty(t, cfg.Database.URL, "the JSONL files by default")
}

func TestBadDatabaseURLNamesTheKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"database": {"url": "mysql://nb@db/nanobot"}}`), 0o600))
	_, _, err := LoadWithEnv(path, nil)
	require.EqualError(t, err, "config "+path+": database.url: not a PostgreSQL URL: want postgres://user:password@host:5432/database")
	_, _, err = LoadWithEnv(filepath.Join(t.TempDir(), "none.json"), []string{DatabaseURLVar + "=db.example"})
	require.ErrorContains(t, err, "env NANOBOT_DATABASE_URL: database.url: not a PostgreSQL URL")
}

func TestOnboardWritesNoDatabaseBlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, Save(path, Default()))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotContains(t, string(data), `"database"`, "nanobot's config file stays nanobot's")
}
