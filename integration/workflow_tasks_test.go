package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/nanobot-durable/nanobot/internal/testenv"
)

// workflowTasks is what the workflow tasks of every run on a server did.
type workflowTasks struct {
	held    int           // started ones whose worker died holding them (start-to-close timeout)
	sticky  int           // left on a dead worker's sticky queue (schedule-to-start timeout)
	longest time.Duration // the longest from started to completed: the margin to the timeout
}

// workflowTaskStats reads every run's history on dev.
func workflowTaskStats(t *testing.T, dev *testenv.DevServer) workflowTasks {
	t.Helper()
	ctx := context.Background()
	var got workflowTasks
	var token []byte
	for {
		resp, err := dev.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{PageSize: 1000, NextPageToken: token})
		require.NoError(t, err)
		for _, e := range resp.GetExecutions() {
			id := e.GetExecution().GetWorkflowId()
			it := dev.Client.GetWorkflowHistory(ctx, id, e.GetExecution().GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			started := map[int64]time.Time{}
			for it.HasNext() {
				ev, err := it.Next()
				require.NoError(t, err)
				at := ev.GetEventTime().AsTime()
				if ev.GetWorkflowTaskStartedEventAttributes() != nil {
					started[ev.GetEventId()] = at
				}
				if a := ev.GetWorkflowTaskCompletedEventAttributes(); a != nil {
					got.longest = max(got.longest, at.Sub(started[a.GetStartedEventId()]))
				}
				a := ev.GetWorkflowTaskTimedOutEventAttributes()
				switch a.GetTimeoutType() {
				case enumspb.TIMEOUT_TYPE_START_TO_CLOSE:
					got.held++
					t.Logf("%s: a workflow task timed out %s after it started", id, at.Sub(started[a.GetStartedEventId()]).Round(time.Millisecond))
				case enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START:
					got.sticky++
				}
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return got
		}
	}
}
