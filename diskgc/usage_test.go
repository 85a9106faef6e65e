package diskgc_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/diskgc"
)

// TestSQLiteFileFreePagesFromTheHeader: testdata/free-pages.db was written
// by SQLite (4 KiB pages, 42 of them, 30 freed by a DELETE).
func TestSQLiteFileFreePagesFromTheHeader(t *testing.T) {
	f, err := diskgc.ReadSQLiteFile("testdata/free-pages.db")
	require.NoError(t, err)
	require.EqualValues(t, 42*4096, f.Bytes)
	require.EqualValues(t, 30*4096, f.FreeBytes)

	notDB := filepath.Join(t.TempDir(), "x.db")
	require.NoError(t, os.WriteFile(notDB, []byte(strings.Repeat("x", 200)), 0o600))
	_, err = diskgc.ReadSQLiteFile(notDB)
	require.ErrorContains(t, err, "not a SQLite database")
}

func TestUsageMeasuresEachKindOnTheFiles(t *testing.T) {
	root := t.TempDir()
	p := diskgc.Places{SessionsDir: filepath.Join(root, "sessions"), MediaDir: filepath.Join(root, "ws", "media"),
		TempDir: filepath.Join(root, "cache"), MemoryDir: filepath.Join(root, "ws", "memory"), TemporalDB: filepath.Join(root, "temporal", "temporal.db")}
	now := time.Now()
	writeFile(t, filepath.Join(p.SessionsDir, "a.jsonl"), strings.Repeat("s", 1500), now)
	writeFile(t, filepath.Join(p.SessionsDir, "a.turns", "t", "p"), strings.Repeat("s", 500), now)
	writeFile(t, filepath.Join(p.MediaDir, "telegram", "x.jpg"), strings.Repeat("m", 7000), now)
	writeFile(t, filepath.Join(p.MemoryDir, "MEMORY.md"), strings.Repeat("y", 300), now)
	db, err := os.ReadFile("testdata/free-pages.db")
	require.NoError(t, err)
	writeFile(t, p.TemporalDB, string(db), now)

	uses, err := diskgc.Usage(context.Background(), p)
	require.NoError(t, err)
	got := map[string]int64{}
	for _, u := range uses {
		got[u.Kind] = u.Bytes
	}
	require.Equal(t, map[string]int64{diskgc.KindSessions: 2000, diskgc.KindMedia: 7000, diskgc.KindTemp: 0,
		diskgc.KindTemporal: 42 * 4096, diskgc.KindMemory: 300}, got)
	require.Contains(t, uses[3].Note, "120.0 KiB free pages")
}
