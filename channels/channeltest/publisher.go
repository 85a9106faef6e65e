// Package channeltest stands in for the channel manager in a channel's own
// tests, where the channel runs against its platform's peer alone.
package channeltest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Publisher is a channels.Publish that behaves as the manager does toward
// the channel: a refused sender gets ErrRefused and nothing more; an
// admitted one has the channel's Admitted hook run, then is recorded.
type Publisher struct {
	t      testing.TB
	mu     sync.Mutex
	got    []protocol.Inbound
	refuse string
}

// NewPublisher records what a channel publishes during test t.
func NewPublisher(t testing.TB) *Publisher { return &Publisher{t: t} }

// Refuse makes the stand-in manager refuse one sender.
func (p *Publisher) Refuse(sender string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = sender
}

// Publish implements channels.Publish.
func (p *Publisher) Publish(ctx context.Context, msg protocol.Inbound, admitted channels.Admitted) error {
	p.mu.Lock()
	refuse := p.refuse
	p.mu.Unlock()
	if refuse != "" && msg.Route.SenderID == refuse {
		return channels.ErrRefused
	}
	if admitted != nil {
		if err := admitted(ctx, &msg); err != nil {
			return err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, msg)
	return nil
}

// Published are the messages recorded so far.
func (p *Publisher) Published() []protocol.Inbound {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]protocol.Inbound(nil), p.got...)
}

// WaitPublished waits until n messages were recorded and returns them.
func (p *Publisher) WaitPublished(n int) []protocol.Inbound {
	p.t.Helper()
	require.Eventually(p.t, func() bool { return len(p.Published()) >= n }, 10*time.Second, 10*time.Millisecond,
		"expected %d published messages", n)
	return p.Published()
}

// WaitLast waits until the last message recorded has id (a sync message:
// a channel takes messages in order, so all sent before it were handled)
// and returns it.
func (p *Publisher) WaitLast(id string) protocol.Inbound {
	p.t.Helper()
	var last protocol.Inbound
	require.Eventually(p.t, func() bool {
		got := p.Published()
		if len(got) == 0 {
			return false
		}
		last = got[len(got)-1]
		return last.ID == id
	}, 10*time.Second, 5*time.Millisecond, "%s never came last", id)
	return last
}
