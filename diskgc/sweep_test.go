package diskgc_test

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/diskgc"
	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/pgstore"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
)

var ages = config.Ages{Media: 30 * 24 * time.Hour, Temp: 24 * time.Hour, Sessions: 90 * 24 * time.Hour}

// backend is one store of sessions and shared media, and how a test backdates them.
type backend struct {
	sessions session.Store
	media    *pgstore.Media // nil on the files
	// ageSession and ageMedia make a session or a shared row look last written at t.
	ageSession func(key string, t time.Time)
	ageMedia   func(ref string, t time.Time)
}

func onFiles(t *testing.T) backend {
	store, err := session.NewJSONLStore(filepath.Join(t.TempDir(), "sessions"), nil)
	require.NoError(t, err)
	return backend{sessions: store, ageSession: func(key string, at time.Time) {
		require.NoError(t, os.Chtimes(store.Path(key), at, at))
	}}
}

func onPostgres(t *testing.T) backend {
	url := pgtest.Database(t)
	ctx := context.Background()
	db, err := pgstore.Open(ctx, url, nil)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(ctx) })
	exec := func(sql string, args ...any) {
		tag, err := conn.Exec(ctx, sql, args...)
		require.NoError(t, err)
		require.EqualValues(t, 1, tag.RowsAffected(), sql)
	}
	return backend{sessions: db.Sessions(), media: db.Media("default", "", t.TempDir()),
		ageSession: func(key string, at time.Time) { exec(`UPDATE sessions SET modified_at = $2 WHERE key = $1`, key, at) },
		ageMedia:   func(ref string, at time.Time) { exec(`UPDATE media SET created_at = $2 WHERE ref = $1`, ref, at) },
	}
}

func writeFile(t *testing.T, path, data string, at time.Time) {
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(data), 0o600))
	require.NoError(t, os.Chtimes(path, at, at))
}

// TestSweepRemovesWhatIsOldAndKeepsWhatIsNamedOrNew runs the rules over one
// world on each backend: old and unnamed goes; named by an unarchived
// message, or new, stays.
func TestSweepRemovesWhatIsOldAndKeepsWhatIsNamedOrNew(t *testing.T) {
	for name, open := range map[string]func(*testing.T) backend{"files": onFiles, "postgres": onPostgres} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			b := open(t)
			now := time.Now()
			long, recent := now.Add(-100*24*time.Hour), now.Add(-time.Hour)
			ws := t.TempDir()
			mediaDir, tempDir := filepath.Join(ws, "media"), filepath.Join(t.TempDir(), "cache")
			named := filepath.Join(mediaDir, "telegram", "named.jpg")     // old, named by an unarchived message
			unnamed := filepath.Join(mediaDir, "telegram", "unnamed.jpg") // old, named by nobody
			archived := filepath.Join(mediaDir, "slack", "archived.pdf")  // old, named only by an archived session
			fresh := filepath.Join(mediaDir, "telegram", "fresh.jpg")     // new
			writeFile(t, named, strings.Repeat("n", 1000), long)
			writeFile(t, unnamed, strings.Repeat("u", 2000), long)
			writeFile(t, archived, strings.Repeat("a", 4000), long)
			writeFile(t, fresh, strings.Repeat("f", 8000), recent)
			staleCopy, usedCopy := filepath.Join(tempDir, "x", "old.png"), filepath.Join(tempDir, "new.png")
			writeFile(t, staleCopy, strings.Repeat("s", 300), now.Add(-48*time.Hour))
			writeFile(t, usedCopy, strings.Repeat("c", 500), recent)

			say := func(key, kind, text string, archivedAll bool, at time.Time) {
				_, err := b.sessions.Append(ctx, key, chat.Message{Role: "user", Content: text, Turn: "t1", EntryID: "u"},
					chat.Message{Role: "assistant", Content: "ok", Turn: "t1", EntryID: "a"})
				require.NoError(t, err)
				require.NoError(t, b.sessions.Update(ctx, key, func(s *session.Session) error {
					s.Kind = kind
					if archivedAll {
						s.LastConsolidated = len(s.Messages)
					}
					return nil
				}))
				b.ageSession(key, at)
			}
			say("telegram:1", "", "look at [image: "+named+"]", false, long) // old but unarchived: stays, keeps named
			say("slack:2", "", "here [file: "+archived+"]", true, long)      // old and archived: goes
			say("dream:3", "dream", "Dream: absorb history", false, long)    // Dream's own, old: goes
			say("subagent:4", "subagent", "a task", false, recent)           // its own but new: stays
			say("telegram:5", "", "all archived, recently", true, recent)    // archived but new: stays

			var sharedFreed int64
			if b.media != nil {
				for _, p := range []string{named, unnamed, fresh} {
					require.NoError(t, b.media.Share(ctx, p))
				}
				b.ageMedia(named, long)
				b.ageMedia(unnamed, long)
				sharedFreed = 2000
			}

			rep, err := diskgc.Sweep{Ages: ages, Now: now, Sessions: b.sessions, MediaDir: mediaDir, TempDir: tempDir, Media: b.media}.Run(ctx)
			require.NoError(t, err)

			var gone []string
			for _, r := range rep.Removed {
				gone = append(gone, r.Kind+" "+r.What)
			}
			want := []string{"sessions slack:2", "sessions dream:3", "media " + unnamed, "media " + archived, "temp " + staleCopy}
			if b.media != nil {
				want = append(want, "media "+unnamed+" (database)")
			}
			sort.Strings(gone)
			sort.Strings(want)
			require.Equal(t, want, gone)
			freed := rep.Freed()
			require.EqualValues(t, 2000+4000+sharedFreed, freed[diskgc.KindMedia])
			require.EqualValues(t, 300, freed[diskgc.KindTemp])
			require.Positive(t, freed[diskgc.KindSessions])
			require.Equal(t, 1+1, rep.Kept-boolInt(b.media != nil), "the old unarchived session and the file it names (and its row)")
			t.Logf("%s: removed %d things, %d bytes (%v)", name, len(rep.Removed), rep.Total(), freed)

			for _, p := range []string{named, fresh, usedCopy} {
				require.FileExists(t, p)
			}
			for _, p := range []string{unnamed, archived, staleCopy, filepath.Dir(staleCopy), filepath.Join(mediaDir, "slack")} {
				require.NoFileExists(t, p)
				require.NoDirExists(t, p)
			}
			lister := b.sessions.(session.Lister)
			infos, err := lister.Sessions()
			require.NoError(t, err)
			var keys []string
			for _, i := range infos {
				keys = append(keys, i.Key)
			}
			require.ElementsMatch(t, []string{"telegram:1", "subagent:4", "telegram:5"}, keys)
			if b.media != nil {
				left, err := b.media.Older(ctx, now.Add(time.Minute))
				require.NoError(t, err)
				require.Equal(t, []pgstore.MediaRow{{Ref: fresh, Size: 8000}, {Ref: named, Size: 1000}}, sortRows(left))
			}

			again, err := diskgc.Sweep{Ages: ages, Now: now, Sessions: b.sessions, MediaDir: mediaDir, TempDir: tempDir, Media: b.media}.Run(ctx)
			require.NoError(t, err)
			require.Empty(t, again.Removed, "a second sweep finds nothing more")
		})
	}
}

// TestZeroAgeKeepsForever: 0 turns a rule off, however old things are.
func TestZeroAgeKeepsForever(t *testing.T) {
	ctx := context.Background()
	b := onFiles(t)
	mediaDir := filepath.Join(t.TempDir(), "media")
	old := time.Now().Add(-10 * 365 * 24 * time.Hour)
	writeFile(t, filepath.Join(mediaDir, "a.jpg"), "a", old)
	_, err := b.sessions.Append(ctx, "cli:1", chat.Message{Role: "user", Content: "hi", Turn: "t", EntryID: "u"})
	require.NoError(t, err)
	require.NoError(t, b.sessions.Update(ctx, "cli:1", func(s *session.Session) error { s.LastConsolidated = 1; return nil }))
	b.ageSession("cli:1", old)
	rep, err := diskgc.Sweep{Ages: config.Retention{MediaDays: new(0), SessionDays: new(0), TempHours: new(0)}.Ages(),
		Sessions: b.sessions, MediaDir: mediaDir, TempDir: mediaDir}.Run(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Removed)
	require.FileExists(t, filepath.Join(mediaDir, "a.jpg"))
}

func sortRows(rows []pgstore.MediaRow) []pgstore.MediaRow {
	sort.Slice(rows, func(i, j int) bool { return rows[i].Ref < rows[j].Ref })
	return rows
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestSharedMediaNamedByItsFetchedCopyStays: the workspace host's session
// names the copy it fetched under its own media/, not the gateway's path
// the row is keyed by; the row is still in use.
func TestSharedMediaNamedByItsFetchedCopyStays(t *testing.T) {
	ctx := context.Background()
	b := onPostgres(t)
	long := time.Now().Add(-100 * 24 * time.Hour)
	gateway, ws := t.TempDir(), t.TempDir()
	ref := filepath.Join(gateway, "media", "telegram", "Q&A <1>.jpg")
	writeFile(t, ref, "jpeg", long)
	require.NoError(t, b.media.Share(ctx, ref))
	b.ageMedia(ref, long)
	copyOnWorkspace := filepath.Join(ws, "media", "telegram", "Q&A <1>.jpg")
	_, err := b.sessions.Append(ctx, "telegram:9", chat.Message{Role: "user", Content: "[image: " + copyOnWorkspace + "]", Turn: "t", EntryID: "u"})
	require.NoError(t, err)

	rep, err := diskgc.Sweep{Ages: ages, Sessions: b.sessions, Media: b.media}.Run(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Removed)
	require.Equal(t, 1, rep.Kept)
}

func TestUsageMeasuresTheTablesOnPostgres(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	db, err := pgstore.Open(ctx, url, nil)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	dir := t.TempDir()
	photo := filepath.Join(dir, "media", "p.jpg")
	noise := make([]byte, 300_000) // incompressible, as a photo is: TOAST would shrink repeated bytes
	_, _ = rand.Read(noise)
	writeFile(t, photo, string(noise), time.Now())
	require.NoError(t, db.Media("default", "", dir).Share(ctx, photo))
	_, err = db.Sessions().Append(ctx, "cli:1", chat.Message{Role: "user", Content: "hello"})
	require.NoError(t, err)

	uses, err := diskgc.Usage(ctx, diskgc.Places{DB: db, MediaDir: filepath.Join(dir, "none")})
	require.NoError(t, err)
	got := map[string]int64{}
	for _, u := range uses {
		got[u.Kind] = u.Bytes
	}
	t.Logf("on PostgreSQL: %v", got)
	require.GreaterOrEqual(t, got[diskgc.KindMedia], int64(300_000), "the row's bytes (TOASTed) count")
	require.Positive(t, got[diskgc.KindSessions])
	require.Positive(t, got[diskgc.KindMemory], "memory_state holds its one row")
}

// TestTemporaryChatLeftBehindGoesAfterADay: a temporary chat whose page never
// discarded it is removed after a day, whatever the sessions' age setting;
// a younger one stays.
func TestTemporaryChatLeftBehindGoesAfterADay(t *testing.T) {
	ctx := context.Background()
	b := onFiles(t)
	for _, key := range []string{"web:tmp-old", "web:tmp-new"} {
		_, err := b.sessions.Append(ctx, key, chat.Message{Role: "user", Content: "hi", Turn: "t", EntryID: "u"})
		require.NoError(t, err)
		require.NoError(t, b.sessions.Update(ctx, key, func(s *session.Session) error { s.Kind = string(protocol.TemporaryTurn); return nil }))
	}
	b.ageSession("web:tmp-old", time.Now().Add(-diskgc.TemporaryChatAge-time.Minute))
	mediaDir := t.TempDir()
	rep, err := diskgc.Sweep{Ages: config.Retention{MediaDays: new(0), SessionDays: new(0), TempHours: new(0)}.Ages(),
		Sessions: b.sessions, MediaDir: mediaDir, TempDir: mediaDir, Now: time.Now()}.Run(ctx)
	require.NoError(t, err)
	require.Len(t, rep.Removed, 1)
	require.Equal(t, "web:tmp-old", rep.Removed[0].What)
	require.NoFileExists(t, b.sessions.Path("web:tmp-old"))
	require.FileExists(t, b.sessions.Path("web:tmp-new"))
}
