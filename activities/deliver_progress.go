package activities

import (
	"context"
	"fmt"
	"sync"

	"github.com/nanobot-durable/nanobot/channels"
	"go.temporal.io/sdk/activity"
)

// deliveryProgress keeps a delivery's channels.Progress in the activity's
// heartbeat details on the Temporal server: a retry, on this gateway or
// another, reads them back and sends only the parts still missing. Liveness
// beats carry the latest progress, so a plain beat never erases it.
type deliveryProgress struct {
	ctx context.Context
	mu  sync.Mutex
}

func newDeliveryProgress(ctx context.Context) *deliveryProgress {
	return &deliveryProgress{ctx: ctx}
}

// prior is what earlier attempts of this delivery recorded.
func (p *deliveryProgress) prior() (prog channels.Progress) {
	if activity.IsActivity(p.ctx) && activity.HasHeartbeatDetails(p.ctx) {
		if err := activity.GetHeartbeatDetails(p.ctx, &prog); err != nil {
			activity.GetLogger(p.ctx).Warn("delivery progress unreadable; sending the whole reply", "error", err)
			return channels.Progress{}
		}
	}
	setBeatDetails(p.ctx, prog)
	return prog
}

// record stores the progress on the server before the next part is sent:
// the SDK batches heartbeats, and a crash must not lose the part just sent.
func (p *deliveryProgress) record(prog channels.Progress) error {
	if !activity.IsActivity(p.ctx) {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	setBeatDetails(p.ctx, prog)
	// The batched heartbeat gets the same details, so a later flush cannot
	// bring back older ones.
	activity.RecordHeartbeat(p.ctx, prog)
	c := activity.GetClient(p.ctx)
	if c == nil {
		return nil
	}
	if err := c.RecordActivityHeartbeat(p.ctx, activity.GetInfo(p.ctx).TaskToken, prog); err != nil {
		return fmt.Errorf("record delivery progress: %w", err)
	}
	return nil
}
