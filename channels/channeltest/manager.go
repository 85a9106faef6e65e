package channeltest

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/pairing"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Bus stands where the Temporal bus is, behind a real manager: it records
// what the manager admitted.
type Bus struct {
	mu   sync.Mutex
	msgs []protocol.Inbound
}

// Publish implements channels.Intake.
func (b *Bus) Publish(_ context.Context, in protocol.Inbound) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.msgs = append(b.msgs, in)
	return "", nil
}

// Admitted are the messages the manager let through, in order.
func (b *Bus) Admitted() []protocol.Inbound {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]protocol.Inbound(nil), b.msgs...)
}

// BehindManager is a real manager's gate for channel c under cfg (its
// allow lists, unifiedSession) with a pairing store: the Publish to start
// c with, and the bus that sees what got in.
func BehindManager(t testing.TB, cfg *config.Config, c channels.Channel) (channels.Publish, *Bus) {
	b := &Bus{}
	m := managerFor(t, cfg, b)
	m.Add(c)
	return gate(m, c), b
}

// managerFor is a real manager over cfg publishing into bus, with a
// pairing store of its own and no channel started.
func managerFor(t testing.TB, cfg *config.Config, bus channels.Intake) *channels.Manager {
	m := channels.NewManager()
	m.Bus, m.Config, m.Pairing = bus, cfg, pairing.NewStore(t.TempDir())
	m.Unified = cfg.Agents.Defaults.UnifiedSession
	require.Empty(t, m.Start(context.Background(), nil)) // no channels: the test starts its own
	return m
}

// gate is m's admission of what c publishes.
func gate(m *channels.Manager, c channels.Channel) channels.Publish {
	return func(ctx context.Context, in protocol.Inbound, admitted channels.Admitted) error {
		return m.Admit(ctx, c, in, admitted)
	}
}
