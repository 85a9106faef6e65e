package channeltest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// Managed is a started channel under a real manager, which draws its
// streams and delivers its answers as a gateway does.
type Managed struct {
	mgr *channels.Manager
	hub *channels.StreamHub
}

// Manage puts c, already started, under a manager reading cfg's
// channels.sendProgress and sendToolHints.
func Manage(t testing.TB, cfg *config.Config, c channels.Channel) Managed {
	t.Helper()
	m := Managed{mgr: channels.NewManager(), hub: channels.NewStreamHub()}
	m.mgr.Config = cfg
	require.Empty(t, m.mgr.Start(context.Background(), m.hub)) // no channels yet: the test started c
	m.mgr.Add(c)
	t.Cleanup(func() { m.mgr.Stop(context.Background()) })
	return m
}

// SendDelta publishes a stream event as a model or tool activity does.
func (m Managed) SendDelta(_ context.Context, ev channels.StreamEvent) { m.hub.Publish(ev) }

// Send delivers a reply as the delivery activity does.
func (m Managed) Send(ctx context.Context, r channels.Reply) error { return m.mgr.Send(ctx, r) }
