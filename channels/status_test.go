package channels

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

type connectedChannel struct {
	fakeChannel
	up bool
}

func (c *connectedChannel) Connected() bool { return c.up }

// A started channel's state: connected as it says (or unknown), and the
// time of the last message its platform sent, refused ones too.
func TestManagerStatesTellConnectionAndLastEvent(t *testing.T) {
	m := NewManager()
	m.Bus, m.Config = &recordingIntake{}, config.Default()
	gated := &connectedChannel{fakeChannel: fakeChannel{name: "gated"}, up: true}
	closed := &fakeChannel{name: "closed"}
	m.Add(gated)
	m.Add(closed)
	require.Empty(t, m.Start(context.Background(), nil))
	before := time.Now().UTC()
	require.ErrorIs(t, m.Admit(context.Background(), closed, protocol.Inbound{Route: protocol.Route{ChatID: "c", SenderID: "x"}}, nil), ErrRefused)

	states := m.States()
	require.Len(t, states, 2)
	require.Equal(t, "closed", states[0].Name)
	require.Nil(t, states[0].Connected)
	require.False(t, states[0].LastEvent.Before(before))
	require.Equal(t, "gated", states[1].Name)
	require.True(t, *states[1].Connected)
	require.True(t, states[1].LastEvent.IsZero())
	gated.up = false
	require.False(t, *m.States()[1].Connected)

	home := t.TempDir()
	require.NoError(t, WriteStatus(home, ProcessStatus{PID: 7, Updated: time.Now().UTC(), Channels: states}))
	got, err := ReadStatuses(home, time.Now().UTC())
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, states[0].LastEvent.Unix(), got[0].Channels[0].LastEvent.Unix())
	got, err = ReadStatuses(home, time.Now().UTC().Add(time.Minute))
	require.NoError(t, err)
	require.Empty(t, got, "a file not rewritten for three periods is a gateway that is gone")
	RemoveStatus(home, 7)
	got, _ = ReadStatuses(home, time.Now().UTC())
	require.Empty(t, got)
}

// Readiness: a connected channel and one that cannot tell are ready; one
// that says it is down and one that never started are named.
func TestNotReadyNamesDownAndMissingChannels(t *testing.T) {
	m := NewManager()
	m.Bus, m.Config = &recordingIntake{}, config.Default()
	up := &connectedChannel{fakeChannel: fakeChannel{name: "up"}, up: true}
	down := &connectedChannel{fakeChannel: fakeChannel{name: "down"}}
	m.Add(up)
	m.Add(down)
	m.Add(&fakeChannel{name: "silent"})
	require.Empty(t, m.Start(context.Background(), nil))

	require.Equal(t, []string{"down: not connected", "gone: not running"},
		NotReady([]string{"down", "gone", "silent", "up"}, m.States()))
	down.up = true
	require.Empty(t, NotReady([]string{"down", "silent", "up"}, m.States()))
}
