package workers

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/nanobot-durable/nanobot/activities"
	"github.com/nanobot-durable/nanobot/protocol"
)

// WorkerGoneError is the failure type of an attempt the resume scan ended.
const WorkerGoneError = "WorkerGone"

// timeoutMargin: an attempt whose heartbeat timeout fires sooner than this
// is left to the server, so a retry it already started is never failed.
const timeoutMargin = time.Second

// orphaned decides whether a started attempt belongs to a process of this
// host that is gone, and why not when it does not. Another host's attempt
// waits for its heartbeat timeout: this host cannot tell whether it lives.
func orphaned(a *workflowpb.PendingActivityInfo, self WorkerIdentity, alive func(pid int) bool, now time.Time) (bool, string) {
	if a.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED {
		return false, "not running"
	}
	last, ok := ParseIdentity(a.GetLastWorkerIdentity())
	switch {
	case !ok:
		return false, "not a nanobot worker"
	case last.Host != self.Host:
		return false, "another host"
	case last == self:
		return false, "this process"
	case last.PID != self.PID && alive(last.PID):
		return false, "its process lives"
	}
	if hb := a.GetActivityOptions().GetHeartbeatTimeout().AsDuration(); hb > 0 {
		seen := a.GetLastStartedTime().AsTime()
		if t := a.GetLastHeartbeatTime(); t != nil && t.AsTime().After(seen) {
			seen = t.AsTime()
		}
		if seen.Add(hb).Sub(now) < timeoutMargin {
			return false, "its heartbeat timeout is due"
		}
	}
	return true, ""
}

// FailOrphanedAttempts fails, through the activity-by-ID API, the running
// activity attempts of nanobot's open workflows whose worker was a process
// of this host that is gone, so their retries start now rather than after
// the heartbeat timeout. It returns how many it failed.
func FailOrphanedAttempts(ctx context.Context, c client.Client, namespace string, inst protocol.Instance, log *slog.Logger) (int, error) {
	self, failed := Self(), 0
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query:         fmt.Sprintf("TaskQueue = '%s' AND ExecutionStatus = 'Running'", inst.TaskQueue()),
			NextPageToken: token,
		})
		if err != nil {
			return failed, fmt.Errorf("list open workflows: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			wid, rid := e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId()
			desc, err := c.DescribeWorkflowExecution(ctx, wid, rid)
			if err != nil {
				log.Warn("resume scan: describing a workflow failed", "workflow", wid, "error", err)
				continue
			}
			n := 0
			for _, a := range desc.GetPendingActivities() {
				if ok, _ := orphaned(a, self, processAlive, time.Now()); !ok {
					continue
				}
				cause := temporal.NewApplicationErrorWithOptions(fmt.Sprintf("worker %s of this host is gone; retrying now", a.GetLastWorkerIdentity()),
					WorkerGoneError, temporal.ApplicationErrorOptions{NextRetryDelay: protocol.RetryAtOnce})
				if err := c.CompleteActivityByID(ctx, namespace, wid, rid, a.GetActivityId(), nil, cause); err != nil {
					log.Warn("resume scan: failing an orphaned attempt failed", "workflow", wid, "activity", a.GetActivityId(), "error", err)
					continue
				}
				log.Info("resume scan: failed an attempt of a gone worker so it retries now", "workflow", wid,
					"activity", a.GetActivityId(), "type", a.GetActivityType().GetName(), "attempt", a.GetAttempt(), "worker", a.GetLastWorkerIdentity())
				n++
			}
			if n > 0 {
				failed += n
				if err := activities.ResetSticky(ctx, c, namespace, wid, rid); err != nil {
					log.Warn("resume scan: the next workflow task may wait for the gone worker's sticky queue", "error", err)
				}
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return failed, nil
		}
	}
}

// resumeScanTimeout bounds the scan at start; what it misses, the heartbeat timeout catches.
const resumeScanTimeout = time.Minute

// scanInBackground runs FailOrphanedAttempts once, until stop is called.
func scanInBackground(c client.Client, namespace string, inst protocol.Instance, log *slog.Logger) (stop func()) {
	if namespace == "" {
		namespace = "default"
	}
	ctx, cancel := context.WithTimeout(context.Background(), resumeScanTimeout)
	go func() {
		defer cancel()
		n, err := FailOrphanedAttempts(ctx, c, namespace, inst, log)
		if err != nil && ctx.Err() == nil {
			log.Warn("resume scan: incomplete; the rest resume after their heartbeat timeout", "error", err)
		}
		if n > 0 {
			log.Info("resume scan: done", "failed_attempts", n)
		}
	}()
	return cancel
}
