package activities

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"go.temporal.io/sdk/activity"
)

// deliveryKeepAlive is how often a running delivery tells Temporal it is
// alive; the turn's delivery options give it a heartbeat timeout, so a
// gateway that dies mid-send is noticed within that, not after the whole
// start-to-close timeout.
const deliveryKeepAlive = 5 * time.Second

// deliveryProgress keeps a delivery's channels.Progress in the activity's
// heartbeat details on the Temporal server: a retry, on this gateway or
// another, reads them back and sends only the parts still missing.
type deliveryProgress struct {
	ctx    context.Context
	mu     sync.Mutex
	latest channels.Progress
	done   chan struct{}
	once   sync.Once
}

func newDeliveryProgress(ctx context.Context) *deliveryProgress {
	p := &deliveryProgress{ctx: ctx, done: make(chan struct{})}
	if !activity.IsActivity(ctx) {
		return p
	}
	go func() {
		tick := time.NewTicker(deliveryKeepAlive)
		defer tick.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				p.mu.Lock()
				activity.RecordHeartbeat(ctx, p.latest)
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// prior is what earlier attempts of this delivery recorded.
func (p *deliveryProgress) prior() (prog channels.Progress) {
	if activity.IsActivity(p.ctx) && activity.HasHeartbeatDetails(p.ctx) {
		if err := activity.GetHeartbeatDetails(p.ctx, &prog); err != nil {
			activity.GetLogger(p.ctx).Warn("delivery progress unreadable; sending the whole reply", "error", err)
			return channels.Progress{}
		}
	}
	p.mu.Lock()
	p.latest = prog
	p.mu.Unlock()
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
	p.latest = prog
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

func (p *deliveryProgress) stop() { p.once.Do(func() { close(p.done) }) }
