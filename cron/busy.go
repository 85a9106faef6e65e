package cron

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/schedules"
)

// How long a fired job waits for its busy session, and how often it looks.
const (
	DefaultBusyWait = 90 * time.Second
	busyPoll        = 250 * time.Millisecond
)

// WaitIdle waits until the session has no running turn, as nanobot defers
// cron turns while their session is busy: a job's message then starts a
// turn of its own instead of being injected into someone else's (where the
// cron-in-cron guard would not hold). It gives up after max, reporting
// false, so a turn that never ends cannot lose the job; tick is called on
// every look (an activity heartbeat).
func WaitIdle(ctx context.Context, c client.Client, inst protocol.Instance, sessionKey string, max time.Duration, tick func()) (bool, error) {
	id := inst.TurnWorkflowID(sessionKey)
	deadline := time.Now().Add(max)
	for {
		desc, err := c.DescribeWorkflowExecution(ctx, id, "")
		switch {
		case schedules.IsNotFound(err):
			return true, nil
		case err != nil:
			return false, fmt.Errorf("describe %s: %w", id, err)
		case desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
			return true, nil
		case !time.Now().Before(deadline):
			return false, nil
		}
		if tick != nil {
			tick()
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(busyPoll):
		}
	}
}
