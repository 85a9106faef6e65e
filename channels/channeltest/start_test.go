package channeltest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/protocol"
)

// echo is a channel on the kit whose platform is a Go channel of event ids.
type echo struct {
	channels.Base
	events chan string
}

func newEcho(events chan string) func(channels.Deps) (*echo, error) {
	return func(d channels.Deps) (*echo, error) {
		c := &echo{events: events}
		c.Init("echo", d.Log, d.SeenSet("echo-events", 64, d.StateFile("echo-seen.json")))
		return c, nil
	}
}

func (c *echo) Start(ctx context.Context, publish channels.Publish) error {
	c.Receive(ctx, publish, "echo loop", func(ctx context.Context) {
		c.Up()
		for {
			select {
			case <-ctx.Done():
				return
			case id := <-c.events:
				if id == "" {
					continue // a barrier: the event before it is handled
				}
				msg := protocol.Inbound{ID: "echo:" + id, Route: protocol.Route{Channel: "echo", ChatID: "c", SenderID: "alice"}}
				_ = c.TakeIn(ctx, id, msg, nil)
			}
		}
	})
	return nil
}

func (c *echo) Send(context.Context, channels.Reply) error { return nil }

func TestStartRunsAChannelAndARestartKeepsTheLossRule(t *testing.T) {
	events := make(chan string)
	env := channeltest.NewEnv(t, "echo", map[string]any{"enabled": true})
	run := channeltest.Start(t, env, newEcho(events))
	require.True(t, run.Ch.Connected(), "Start waited for the connection")

	run.Down.Store(true)
	events <- "1" // Temporal is down: not taken
	events <- "2"
	events <- "" // the loop took "2" in (and was refused) before Temporal comes back
	run.Down.Store(false)
	events <- "3"
	require.Equal(t, "echo:3", run.WaitPublished(1)[0].ID)
	run.Stop()
	run.Stop() // once only

	again := channeltest.Start(t, env, newEcho(events)) // a restart on the same home
	for _, id := range []string{"1", "2", "3"} {
		events <- id // the platform delivers again
	}
	events <- "4"
	got := again.WaitPublished(3)
	require.Len(t, got, 3)
	require.Equal(t, []string{"echo:1", "echo:2", "echo:4"}, []string{got[0].ID, got[1].ID, got[2].ID},
		"what Temporal did not take came in again; what it took did not")
}

func TestMerge(t *testing.T) {
	base := map[string]any{"a": 1, "b": 2}
	require.Equal(t, map[string]any{"a": 1, "b": 3, "c": 4}, channeltest.Merge(base, map[string]any{"b": 3, "c": 4}))
	require.Equal(t, map[string]any{"a": 1, "b": 2}, base, "the defaults are left alone")
}
