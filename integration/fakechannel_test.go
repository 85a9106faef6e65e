package integration

import (
	"context"
	"sync"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/nanobot-durable/nanobot/protocol"
)

// recordingChannel stands in for the process that owns a chat: it serves
// Deliver on the given task queues and keeps every delivery it was handed.
// It lives in the test process, so killing a worker never kills it.
type recordingChannel struct {
	mu         sync.Mutex
	deliveries []protocol.DeliverInput
}

func startRecordingChannel(t *testing.T, c client.Client, queues ...string) *recordingChannel {
	t.Helper()
	ch := &recordingChannel{}
	for _, q := range queues {
		w := worker.New(c, q, worker.Options{})
		w.RegisterActivityWithOptions(ch.deliver, activity.RegisterOptions{Name: protocol.ActivityDeliver})
		if err := w.Start(); err != nil {
			t.Fatalf("start the recording channel on %s: %v", q, err)
		}
		t.Cleanup(w.Stop)
	}
	return ch
}

func (ch *recordingChannel) deliver(_ context.Context, in protocol.DeliverInput) error {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.deliveries = append(ch.deliveries, in)
	return nil
}

// Deliveries returns a copy of what was delivered so far.
func (ch *recordingChannel) Deliveries() []protocol.DeliverInput {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return append([]protocol.DeliverInput(nil), ch.deliveries...)
}

// answered counts, per inbound message ID, the deliveries that answered it.
func (ch *recordingChannel) answered() map[string]int {
	out := map[string]int{}
	for _, d := range ch.Deliveries() {
		for _, id := range d.MessageIDs {
			out[id]++
		}
	}
	return out
}
