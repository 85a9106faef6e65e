package channels

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/protocol"
)

// claimingSet records a key when it is claimed, as the set every gateway
// shares does (pgstore); it outlives a restart as the database does.
type claimingSet struct{ *RecentKeys }

func (s claimingSet) Claim(key string) bool { return !s.Add(key) }

// sets are the two kinds of dedupe set a restart finds again: the file of
// one process, and the shared set of the database.
func sets(t *testing.T) map[string]func() SeenKeys {
	file := filepath.Join(t.TempDir(), "seen.json")
	shared := claimingSet{NewRecentKeys(64)}
	return map[string]func() SeenKeys{
		"file":   func() SeenKeys { return LoadRecentKeys(64, file, nil) },
		"shared": func() SeenKeys { return shared },
	}
}

// baseOn is a Base taking events in through seen, publishing through
// publish (as a restart with the same home would build it again).
func baseOn(seen SeenKeys, publish Publish) *Base {
	b := &Base{}
	b.Init("test", slog.New(slog.DiscardHandler), seen)
	b.Attach(publish)
	return b
}

// TestTakeInLossRule is the one loss rule of every channel: a message
// Temporal did not take is taken in again (after a restart too); one it
// took, refused or handled is never taken in twice.
func TestTakeInLossRule(t *testing.T) {
	for name, open := range sets(t) {
		t.Run(name, func(t *testing.T) { testLossRule(t, open) })
	}
}

func testLossRule(t *testing.T, open func() SeenKeys) {
	var got []string
	down := true
	publish := func(_ context.Context, msg protocol.Inbound, _ Admitted) error {
		switch {
		case down:
			return errors.New("temporal unreachable")
		case msg.Route.SenderID == "stranger":
			return ErrRefused
		case msg.Content == "/start":
			return ErrHandled
		}
		got = append(got, msg.ID)
		return nil
	}
	msg := func(id, sender, text string) protocol.Inbound {
		return protocol.Inbound{ID: id, Route: protocol.Route{ChatID: "c", SenderID: sender}, Content: text}
	}
	b := baseOn(open(), publish)
	err := b.TakeIn(context.Background(), "m1", msg("m1", "alice", "hi"), nil)
	require.Error(t, err, "Temporal did not take it")
	require.False(t, Handed(err), "so the platform must not be told it was handled")
	require.False(t, b.Seen().Has("m1"), "its key is released")

	down = false
	b = baseOn(open(), publish) // a restart
	require.NoError(t, b.TakeIn(context.Background(), "m1", msg("m1", "alice", "hi"), nil), "taken in again after the restart")
	err = b.TakeIn(context.Background(), "m2", msg("m2", "stranger", "hi"), nil)
	require.ErrorIs(t, err, ErrRefused)
	require.True(t, Handed(err), "a refusal is an answer")
	err = b.TakeIn(context.Background(), "m3", msg("m3", "alice", "/start"), nil)
	require.ErrorIs(t, err, ErrHandled)
	require.True(t, Handed(err), "so is a hook's own reply")
	require.Equal(t, []string{"m1"}, got)

	b = baseOn(open(), publish) // another restart: what was taken stays taken
	for _, k := range []string{"m1", "m2", "m3"} {
		err := b.TakeIn(context.Background(), k, msg(k, "alice", "again"), nil)
		require.ErrorIs(t, err, ErrDuplicate, k)
		require.True(t, Handed(err), "a duplicate is acknowledged")
	}
	require.Equal(t, []string{"m1"}, got, "never answered twice")

	require.NoError(t, b.TakeIn(context.Background(), "", msg("x", "alice", "no id"), nil))
	require.NoError(t, b.TakeIn(context.Background(), "", msg("x", "alice", "no id"), nil))
	require.Equal(t, []string{"m1", "x", "x"}, got, "an event without a key is not deduplicated")
}

func TestTakeInBeforeStartIsNotLost(t *testing.T) {
	b := &Base{}
	b.Init("test", nil, NewRecentKeys(4))
	require.Error(t, b.TakeIn(context.Background(), "k", protocol.Inbound{}, nil))
	require.False(t, b.Seen().Has("k"))
}

func TestBaseConnectedAndLastEvent(t *testing.T) {
	b := &Base{}
	b.Init("test", nil, nil)
	require.Equal(t, "test", b.Name())
	require.False(t, b.Connected())
	require.True(t, b.LastEvent().IsZero())
	b.Up()
	require.True(t, b.Connected())
	require.False(t, b.LastEvent().IsZero())
	b.Down()
	require.False(t, b.Connected())

	require.Empty(t, b.BotID(), "unknown until the platform says")
	b.SetBot("U1", "nanobot")
	id, name := b.Bot()
	require.Equal(t, []string{"U1", "nanobot"}, []string{id, name})
}

func TestTakeInPatientlyRetriesUntilTaken(t *testing.T) {
	fails := 1
	b := baseOn(NewRecentKeys(4), func(context.Context, protocol.Inbound, Admitted) error {
		if fails > 0 {
			fails--
			return errors.New("temporal restarting")
		}
		return nil
	})
	require.NoError(t, b.TakeInPatiently(context.Background(), "k", protocol.Inbound{}, nil, time.Minute))
	require.True(t, b.Seen().Has("k"))

	fails = 100
	err := b.TakeInPatiently(context.Background(), "k2", protocol.Inbound{}, nil, 0)
	require.ErrorContains(t, err, "temporal restarting", "no patience: one attempt")
	require.False(t, b.Seen().Has("k2"))
}
