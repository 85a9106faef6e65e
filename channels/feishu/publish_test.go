package feishu

import (
	"context"
	"sync"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// recordingPublish stands where the manager is, across two channels (a restart).
type recordingPublish struct {
	mu  sync.Mutex
	got []protocol.Inbound
}

func (p *recordingPublish) publish(ctx context.Context, msg protocol.Inbound, admitted channels.Admitted) error {
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

func (p *recordingPublish) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.got)
}

func (p *recordingPublish) last() protocol.Inbound {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.got[len(p.got)-1]
}

// partOf is a reply's only text part.
func partOf(text string) channels.Part { return channels.Part{Text: text, Last: true} }
