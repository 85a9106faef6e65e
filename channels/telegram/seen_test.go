package telegram

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

func textUpdate(id int64, text string) *models.Update {
	return &models.Update{ID: id, Message: &models.Message{
		ID: int(id), From: alice, Chat: models.Chat{ID: alice.ID, Type: models.ChatTypePrivate}, Text: text,
	}}
}

// TestUpdateTakenInByAnotherGatewayIsDropped: two channels on one shared
// dedupe set (two gateways on one database) hand an update on once, and
// the set replaces the file under the home.
func TestUpdateTakenInByAnotherGatewayIsDropped(t *testing.T) {
	f := newFakeAPI(t)
	shared := channels.NewRecentKeys(16)
	var opened []string
	seen := func(set string, n int) channels.SeenKeys {
		opened = append(opened, set)
		return shared
	}
	home := t.TempDir()
	withHome := func(cfg *config.Config) { cfg.Path = filepath.Join(home, "config.json") }
	first, second := startChannelWith(t, f, withHome, seen), startChannelWith(t, f, withHome, seen)
	p1, p2 := &capture{}, &capture{}
	first.Attach(p1.via(t, first))
	second.Attach(p2.via(t, second))

	first.onUpdate(context.Background(), nil, textUpdate(7, "hello"))
	second.onUpdate(context.Background(), nil, textUpdate(7, "hello")) // redelivered to the other gateway
	second.onUpdate(context.Background(), nil, textUpdate(8, "next"))

	require.Len(t, p1.got(), 1)
	got := p2.got()
	require.Len(t, got, 1, "the second gateway takes in only the update the first did not")
	require.Equal(t, "next", got[0].Content)
	require.Equal(t, []string{"telegram-updates", "telegram-updates"}, opened)
	_, err := os.Stat(filepath.Join(home, "channels", "telegram-updates.json"))
	require.ErrorIs(t, err, os.ErrNotExist, "the shared set is the one kept, not the home's file")
}

// TestWithoutASharedSetEachChannelKeepsItsOwn: with Deps.Seen nil (the
// files store) a channel still drops its own duplicates, and keeps them in
// the file under the home as before.
func TestWithoutASharedSetEachChannelKeepsItsOwn(t *testing.T) {
	f := newFakeAPI(t)
	home := t.TempDir()
	withHome := func(cfg *config.Config) { cfg.Path = filepath.Join(home, "config.json") }
	first := startChannel(t, f, withHome)
	p1 := &capture{}
	first.Attach(p1.via(t, first))
	first.onUpdate(context.Background(), nil, textUpdate(7, "hello"))
	first.onUpdate(context.Background(), nil, textUpdate(7, "hello"))
	require.Len(t, p1.got(), 1)
	require.FileExists(t, filepath.Join(home, "channels", "telegram-updates.json"))

	other := startChannel(t, f, nil) // no home: memory only, its own set
	p2 := &capture{}
	other.Attach(p2.via(t, other))
	other.onUpdate(context.Background(), nil, textUpdate(7, "hello"))
	require.Len(t, p2.got(), 1, "sets are not shared without Deps.Seen")
}
