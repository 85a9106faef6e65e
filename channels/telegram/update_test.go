package telegram

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

var alice = &models.User{ID: 42, Username: "alice", FirstName: "Alice"}

func photoUpdate(id int64, from *models.User) *models.Update {
	return &models.Update{ID: id, Message: &models.Message{
		ID: int(id), From: from, Chat: models.Chat{ID: from.ID, Type: models.ChatTypePrivate},
		Caption: "what is this?", Photo: []models.PhotoSize{{FileID: "small"}, {FileID: "big"}},
	}}
}

// TestPhotoIsDownloadedIntoMediaAndPublishedOnce: the largest size is
// fetched into <workspace>/media and handed on as Inbound.Media; the
// same update again (a server that ignores offset) is not published twice.
func TestPhotoIsDownloadedIntoMediaAndPublishedOnce(t *testing.T) {
	f := newFakeAPI(t)
	c := startChannel(t, f, func(cfg *config.Config) { editBlock(t, cfg, func(b *Config) { b.AllowFrom = []string{"alice"} }) })
	p := &capture{}
	c.Attach(p.via(t, c))

	c.onUpdate(context.Background(), nil, photoUpdate(7, alice))
	c.onUpdate(context.Background(), nil, photoUpdate(7, alice))
	got := p.got()
	require.Len(t, got, 1)
	in := got[0]
	require.Equal(t, "what is this?", in.Content)
	require.Equal(t, "42|alice", in.Route.SenderID)
	require.Len(t, in.Media, 1)
	require.Equal(t, filepath.Join(c.workspace, "media", "telegram-u-big.jpg"), in.Media[0])
	data, err := os.ReadFile(in.Media[0])
	require.NoError(t, err)
	require.Equal(t, "file bytes of big.jpg", string(data))
	require.Equal(t, "big", f.sent("getFile")[0].Form["file_id"], "the largest size")
}

// TestNamelessFileKeepsTheServersExtension: a video without a file name
// of a type the MIME table does not know is saved with the extension of
// the server's path.
func TestNamelessFileKeepsTheServersExtension(t *testing.T) {
	f := newFakeAPI(t)
	c := startChannel(t, f, func(cfg *config.Config) { editBlock(t, cfg, func(b *Config) { b.AllowFrom = []string{"alice"} }) })
	p := &capture{}
	c.Attach(p.via(t, c))
	upd := photoUpdate(9, alice)
	upd.Message.Photo, upd.Message.Video = nil, &models.Video{FileID: "video1"}
	c.onUpdate(context.Background(), nil, upd)
	got := p.got()
	require.Len(t, got, 1)
	require.Equal(t, []string{filepath.Join(c.workspace, "media", "telegram-u-video1.zzq")}, got[0].Media)
}

// TestFailedDownloadIsALine: a file that cannot be fetched is not lost
// silently: the model reads "[image: download failed]" under the caption.
func TestFailedDownloadIsALine(t *testing.T) {
	f := newFakeAPI(t)
	c := startChannel(t, f, func(cfg *config.Config) { editBlock(t, cfg, func(b *Config) { b.AllowFrom = []string{"alice"} }) })
	p := &capture{}
	c.Attach(p.via(t, c))
	upd := photoUpdate(8, alice)
	upd.Message.Photo = []models.PhotoSize{{FileID: "gone"}}
	c.onUpdate(context.Background(), nil, upd)
	got := p.got()
	require.Len(t, got, 1)
	require.Empty(t, got[0].Media)
	require.Equal(t, "what is this?\n[image: download failed]", got[0].Content)
	require.Len(t, f.sent("download"), 1)
}

// TestStrangersFilesAreNotFetched: a sender the manager will refuse gets
// no download; the message still goes to the manager (for a pairing code).
func TestStrangersFilesAreNotFetched(t *testing.T) {
	f := newFakeAPI(t)
	c := startChannel(t, f, func(cfg *config.Config) {
		editBlock(t, cfg, func(b *Config) { b.AllowFrom = []string{"someone-else"} })
	})
	p := &capture{}
	c.Attach(p.via(t, c))
	up := photoUpdate(8, alice)
	up.Message.Caption = ""
	c.onUpdate(context.Background(), nil, up)
	require.Empty(t, p.got())
	require.Empty(t, f.sent("getFile", "download"))
	require.Empty(t, f.sent("sendChatAction"), "no typing for a refused message")
	sent := f.sent("sendMessage")
	require.Len(t, sent, 1, "the stranger's photo still gets the pairing code")
	require.Contains(t, sent[0].Form["text"], "pairing code")
}

// TestStartIsGreetedWithoutTheAgent: /start from an allowed user is
// answered by the channel with nanobot's greeting.
func TestStartIsGreetedWithoutTheAgent(t *testing.T) {
	f := newFakeAPI(t)
	c := startChannel(t, f, nil)
	p := &capture{}
	c.Attach(p.via(t, c))
	c.onUpdate(context.Background(), nil, &models.Update{ID: 1, Message: &models.Message{
		ID: 1, From: alice, Chat: models.Chat{ID: 42, Type: models.ChatTypePrivate}, Text: "/start",
	}})
	require.Empty(t, p.got())
	sent := f.sent("sendMessage")
	require.Len(t, sent, 1)
	require.True(t, strings.HasPrefix(sent[0].Form["text"], "👋 Hi Alice! I'm nanobot."))
}

func TestHandledUpdatesSurviveARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "channels", "telegram-updates.json")
	first := channels.LoadRecentKeys(3, path, nil)
	for _, id := range []string{"10", "11", "12", "13"} {
		require.False(t, first.Add(id))
	}
	require.True(t, first.Add("12"))
	again := channels.LoadRecentKeys(3, path, nil)
	require.False(t, again.Has("10"), "only the newest n are kept")
	for _, id := range []string{"11", "12", "13"} {
		require.True(t, again.Has(id), "update %s was handled before the restart", id)
	}
	require.NoError(t, os.WriteFile(path, []byte("[20, 21]"), 0o600))
	require.True(t, channels.LoadRecentKeys(3, path, nil).Has("21"), "the ids an older build saved as numbers")
	require.NoError(t, os.WriteFile(path, []byte("{broken"), 0o600))
	require.False(t, channels.LoadRecentKeys(3, path, nil).Has("12"), "a broken file starts afresh")
}
