package workers

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

// PolledQueue is one task queue a worker of the set polls, and for which tasks.
type PolledQueue struct {
	Name string
	Type enumspb.TaskQueueType
}

// pollerFresh is how old a poller's last poll may be: a live poller renews
// its long poll at least every minute; an older entry is a process that went
// away (the server lists it a while longer).
const pollerFresh = 75 * time.Second

// LivePollers are the identities the server saw polling queue for tasks of
// kind within the last minute or so.
func LivePollers(ctx context.Context, c client.Client, queue string, kind enumspb.TaskQueueType) ([]string, error) {
	resp, err := c.DescribeTaskQueue(ctx, queue, kind)
	if err != nil {
		return nil, fmt.Errorf("describe task queue %s: %w", queue, err)
	}
	var out []string
	for _, p := range resp.GetPollers() {
		if t := p.GetLastAccessTime(); t != nil && time.Since(t.AsTime()) < pollerFresh {
			out = append(out, p.GetIdentity())
		}
	}
	return out, nil
}

// Polled are the task queues the set's workers poll.
func (s *Set) Polled() []PolledQueue { return slices.Clone(s.polled) }

// Identity is the set's poller identity ("" when the SDK chose it).
func (s *Set) Identity() string { return s.identity }

// Err is the first fatal error a worker of the set stopped on (the SDK
// stops polling after one, e.g. a namespace that went away); nil while all poll.
func (s *Set) Err() error { return s.fatal.get() }

// fatalError keeps the first error a worker reported as fatal.
type fatalError struct {
	mu  sync.Mutex
	err error
}

func (f *fatalError) set(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

func (f *fatalError) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}
