package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/diskgc"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/media"
	"github.com/nanobot-durable/nanobot/session"
)

// gcHome is a home with a workspace, one old archived session, one live one
// naming a photo, and media and cache files of known sizes and ages.
func gcHome(t *testing.T) (cfgPath, ws string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("TMPDIR", filepath.Join(home, "tmp"))
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	ws = filepath.Join(home, "ws")
	cfgPath = filepath.Join(home, "config.json")
	require.NoError(t, os.WriteFile(cfgPath, []byte(`{"agents":{"defaults":{"workspace":"`+ws+`"}},"retention":{"mediaDays":7}}`), 0o600))
	old := time.Now().Add(-100 * 24 * time.Hour)
	put := func(p string, n int) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, bytes.Repeat([]byte("x"), n), 0o600))
		require.NoError(t, os.Chtimes(p, old, old))
	}
	photo := filepath.Join(media.Dir(ws), "telegram", "photo.jpg")
	put(photo, 10_000)
	put(filepath.Join(media.Dir(ws), "telegram", "voice.ogg"), 50_000)
	put(filepath.Join(media.Dir(""), "slack", "report.pdf"), 20_000)

	store, err := session.NewJSONLStore(session.SessionsDir(home, ws), nil)
	require.NoError(t, err)
	ctx := context.Background()
	for key, text := range map[string]string{"telegram:1": "see [image: " + photo + "]", "cli:old": "long done"} {
		_, err := store.Append(ctx, key, chat.Message{Role: "user", Content: text, Turn: "t", EntryID: "u"})
		require.NoError(t, err)
	}
	require.NoError(t, store.Update(ctx, "cli:old", func(s *session.Session) error { s.LastConsolidated = 1; return nil }))
	require.NoError(t, os.Chtimes(store.Path("cli:old"), old, old))
	return cfgPath, ws
}

func TestGCRemovesWhatIsOldAndPrintsWhatItFreed(t *testing.T) {
	cfgPath, ws := gcHome(t)
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"--config", cfgPath, "gc"}, nil, &out, &errOut), errOut.String())
	t.Log(out.String())
	require.Contains(t, out.String(), "removed sessions")
	require.Contains(t, out.String(), "removed media      48.8 KiB  "+filepath.Join(media.Dir(ws), "telegram", "voice.ogg"))
	require.Contains(t, out.String(), "removed temp       19.5 KiB  ")
	require.Contains(t, out.String(), "Kept 1 old items")
	require.Contains(t, out.String(), "Rules: media 7 days, temp copies 24 hours, archived sessions 90 days")
	require.FileExists(t, filepath.Join(media.Dir(ws), "telegram", "photo.jpg"), "named by a live session")
	require.NoFileExists(t, filepath.Join(media.Dir(ws), "telegram", "voice.ogg"))

	out.Reset()
	require.Equal(t, 0, run([]string{"--config", cfgPath, "gc", "--json"}, nil, &out, &errOut), errOut.String())
	var rep diskgc.Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
	require.Empty(t, rep.Removed, "nothing left to remove")
	require.Equal(t, 1, rep.Kept)
}

func TestStatusShowsDiskUsePerKind(t *testing.T) {
	cfgPath, ws := gcHome(t)
	out, _ := statusOf(t, cfgPath)
	disk := out[strings.Index(out, "\nDisk:\n"):]
	require.Contains(t, disk, "  media          58.6 KiB  "+media.Dir(ws)+"\n")
	require.Contains(t, disk, "  temp           19.5 KiB  ")
	require.Regexp(t, `  sessions +[0-9.]+ (B|KiB)  .*sessions`, disk)
	require.Contains(t, disk, "  memory              0 B  ")
	require.NotContains(t, disk, diskgc.KindTemporal, "an external Temporal keeps its own database")
}

// TestGCVacuumsTheStoppedEmbeddedTemporal: with the embedded server down,
// gc has temporal-dev give the free pages back (the testdata file is 42
// pages of 4 KiB, 30 of them free).
func TestGCVacuumsTheStoppedEmbeddedTemporal(t *testing.T) {
	cfgPath, _ := gcHome(t)
	t.Setenv("TEMPORAL_ADDRESS", "")
	t.Setenv("NANOBOT_DEV_PORT", strconv.Itoa(testenv.FreePort(t)))
	t.Setenv("PATH", filepath.Dir(testenv.DevServerBin(t))+string(os.PathListSeparator)+os.Getenv("PATH"))
	db := diskgc.EmbeddedTemporalDB(filepath.Dir(cfgPath))
	data, err := os.ReadFile("../../diskgc/testdata/free-pages.db")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(db), 0o700))
	require.NoError(t, os.WriteFile(db, data, 0o600))

	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"--config", cfgPath, "gc"}, nil, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "Temporal DB: vacuumed while the server is stopped, 168.0 KiB → 48.0 KiB\n")
	f, err := diskgc.ReadSQLiteFile(db)
	require.NoError(t, err)
	require.Zero(t, f.FreeBytes)
}
