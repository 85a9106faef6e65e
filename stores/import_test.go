package stores_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/memory"
	"github.com/nanobot-durable/nanobot/pgstore"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/stores"
	"github.com/nanobot-durable/nanobot/usage"
)

// home writes a config whose workspace is inside a temp home.
func home(t *testing.T) *config.Config {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	ws := filepath.Join(dir, "workspace")
	require.NoError(t, os.WriteFile(path, []byte(`{"agents":{"defaults":{"workspace":"`+ws+`"}}}`), 0o600))
	cfg, _, err := config.LoadWithEnv(path, nil)
	require.NoError(t, err)
	return cfg
}

func TestImportCopiesAJSONLHomeOnce(t *testing.T) {
	ctx := context.Background()
	cfg := home(t)
	files, err := stores.OnFiles(cfg, nil)
	require.NoError(t, err)
	_, err = files.Sessions.Append(ctx, "telegram:1",
		chat.Message{Role: chat.RoleUser, Content: "hi", Turn: "t1", EntryID: "user"},
		chat.Message{Role: chat.RoleAssistant, Content: "hello", Turn: "t1", EntryID: "final"})
	require.NoError(t, err)
	require.NoError(t, files.Sessions.Update(ctx, "telegram:1", func(s *session.Session) error {
		s.Metadata["goal"], s.LastConsolidated = "tea", 1
		return nil
	}))
	_, err = files.Sessions.Append(ctx, "dream:1", chat.Message{Role: chat.RoleUser, Content: "absorb"}) // nanobot's lines have no entry ids
	require.NoError(t, err)
	require.NoError(t, files.Sessions.Update(ctx, "dream:1", func(s *session.Session) error { s.Kind = "dream"; return nil }))
	_, err = files.Sessions.Claim(ctx, "telegram:1", "t1", "tool-c1")
	require.NoError(t, err)
	require.NoError(t, files.Sessions.PutTurnData(ctx, "telegram:1", "t1", "system", []byte("the prompt")))
	require.NoError(t, files.Usage.Add(usage.Record{Time: time.Now(), Session: "telegram:1", Turn: "t1", Call: "llm-1", Model: "m", Prompt: 10}))
	require.NoError(t, files.Usage.Add(usage.Record{Time: time.Now(), Session: "telegram:1", Turn: "t1", Call: "llm-2", Model: "m", Prompt: 20}))
	code, _, err := files.Pairing.Request("telegram", "42", "c")
	require.NoError(t, err)
	_, err = files.Pairing.Approve(code)
	require.NoError(t, err)
	_, _, err = files.Pairing.Request("slack", "U9", "D9")
	require.NoError(t, err)
	for _, text := range []string{"one", "two", "three"} {
		_, err := files.Archive.Append(ctx, memory.Entry{Content: text, SessionKey: "telegram:1"})
		require.NoError(t, err)
	}
	_, err = files.Archive.AdvanceCursor(ctx, 0, 2)
	require.NoError(t, err)

	db, err := pgstore.Open(ctx, pgtest.Database(t), nil)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Sessions().Append(ctx, "cli:there", chat.Message{Role: chat.RoleUser, Content: "mine", Turn: "x", EntryID: "u"})
	require.NoError(t, err)

	rep, err := stores.Import(ctx, cfg, db, nil)
	require.NoError(t, err)
	require.Equal(t, stores.ImportReport{Sessions: 2, Messages: 3, Claims: 1, Blobs: 1, Usage: 2, Pending: 1, Approved: 1, History: 3, DreamCursor: 2}, rep)

	pg := stores.OnDatabase(db)
	sess, err := pg.Sessions.Load(ctx, "telegram:1")
	require.NoError(t, err)
	want, err := files.Sessions.Load(ctx, "telegram:1")
	require.NoError(t, err)
	require.Equal(t, want.Messages, sess.Messages)
	require.Equal(t, "tea", sess.Metadata["goal"])
	require.Equal(t, 1, sess.LastConsolidated)
	require.WithinDuration(t, want.CreatedAt, sess.CreatedAt, time.Millisecond)
	dreams, err := pg.Sessions.(session.Lister).SessionsOfKind("dream")
	require.NoError(t, err)
	require.Len(t, dreams, 1)
	ok, err := pg.Sessions.Claim(ctx, "telegram:1", "t1", "tool-c1")
	require.NoError(t, err)
	require.False(t, ok, "the claim came along: the step is not run again on the database")
	data, err := pg.Sessions.TurnData(ctx, "telegram:1", "t1", "system")
	require.NoError(t, err)
	require.Equal(t, "the prompt", string(data))
	recs, _, err := pg.Usage.Since(time.Time{})
	require.NoError(t, err)
	require.Len(t, recs, 2)
	approved, err := pg.Pairing.IsApproved("telegram", "42")
	require.NoError(t, err)
	require.True(t, approved)
	entries, err := pg.Archive.Entries(ctx)
	require.NoError(t, err)
	require.Len(t, entries, 3)
	cursor, err := pg.Archive.Cursor(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, cursor)

	again, err := stores.Import(ctx, cfg, db, nil)
	require.NoError(t, err)
	require.Equal(t, stores.ImportReport{SessionsThere: 2, UsageThere: 2, HistoryThere: true}, again, "a second import copies nothing")
	sess, err = pg.Sessions.Load(ctx, "telegram:1")
	require.NoError(t, err)
	require.Len(t, sess.Messages, 2)
	dream, err := pg.Sessions.Load(ctx, "dream:1")
	require.NoError(t, err)
	require.Len(t, dream.Messages, 1, "lines without entry ids are not copied twice")
	mine, err := pg.Sessions.Load(ctx, "cli:there")
	require.NoError(t, err)
	require.Equal(t, "mine", mine.Messages[0].Content, "the database's own sessions are untouched")
}
