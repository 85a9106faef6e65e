package workers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// DeploymentEnv opts a process into Worker Versioning: its turn-queue
// workers register the version <deployment>:<build id> (the binary's
// version) and every workflow they start is pinned to it, so a run in flight
// finishes on the build that began it. Empty (the default): unversioned,
// and a new build replays runs in flight (README "Changing workflow code").
const DeploymentEnv = "NANOBOT_WORKER_DEPLOYMENT"

// deploymentOptions version the workers of the turn queue, where the
// workflows run; the activity-only queues (models, workspace, deliveries)
// stay unversioned: a pinned run's activities go to whichever build polls.
func deploymentOptions(deployment, build string) worker.DeploymentOptions {
	return worker.DeploymentOptions{
		UseVersioning:             true,
		Version:                   worker.WorkerDeploymentVersion{DeploymentName: deployment, BuildID: build},
		DefaultVersioningBehavior: workflow.VersioningBehaviorPinned,
	}
}

// Promote makes build the deployment's current version: new runs start on
// it, pinned runs stay where they are. A version the server has not seen
// yet (its workers started a moment ago) is asked again for up to wait.
func Promote(ctx context.Context, c client.Client, deployment, build string, wait time.Duration) error {
	h := c.WorkerDeploymentClient().GetHandle(deployment)
	deadline := time.Now().Add(wait)
	for {
		_, err := h.SetCurrentVersion(ctx, client.WorkerDeploymentSetCurrentVersionOptions{BuildID: build})
		if err == nil {
			return nil
		}
		var notFound *serviceerror.NotFound
		var failed *serviceerror.FailedPrecondition
		if !(errors.As(err, &notFound) || errors.As(err, &failed)) || time.Now().After(deadline) {
			return fmt.Errorf("make %s:%s current: %w", deployment, build, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("make %s:%s current: %w", deployment, build, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// promoteIfNone makes build current when the deployment has none: the
// first versioned start. Later builds are made current by `nanobot
// deployment promote`, never by starting: a restarted old process must not
// take new runs back.
func promoteIfNone(ctx context.Context, c client.Client, deployment, build string, log *slog.Logger) {
	for deadline := time.Now().Add(time.Minute); ctx.Err() == nil && time.Now().Before(deadline); {
		d, err := c.WorkerDeploymentClient().GetHandle(deployment).Describe(ctx, client.WorkerDeploymentDescribeOptions{})
		var notFound *serviceerror.NotFound
		switch {
		case err == nil && d.Info.RoutingConfig.CurrentVersion != nil:
			return
		case err == nil || errors.As(err, &notFound): // none current, or not registered yet
			if err := Promote(ctx, c, deployment, build, 30*time.Second); err != nil {
				log.Warn("worker versioning: could not make this build current", "deployment", deployment, "build", build, "error", err)
			} else {
				log.Info("worker versioning: this build is the deployment's first current version", "deployment", deployment, "build", build)
			}
			return
		}
		time.Sleep(time.Second)
	}
}

// VersionStatus is one version of a deployment as `nanobot deployment` shows it.
type VersionStatus struct {
	BuildID  string
	Current  bool
	Drainage string // the server's: draining, drained, or "" while it is current
	Running  int64  // workflows pinned to it that still run
}

// DescribeDeployment lists the deployment's versions, newest first, with the runs still pinned to each.
func DescribeDeployment(ctx context.Context, c client.Client, deployment string) ([]VersionStatus, error) {
	d, err := c.WorkerDeploymentClient().GetHandle(deployment).Describe(ctx, client.WorkerDeploymentDescribeOptions{})
	if err != nil {
		return nil, fmt.Errorf("describe deployment %s: %w", deployment, err)
	}
	var current string
	if v := d.Info.RoutingConfig.CurrentVersion; v != nil {
		current = v.BuildID
	}
	var out []VersionStatus
	for _, v := range d.Info.VersionSummaries {
		n, err := PinnedRunning(ctx, c, deployment, v.Version.BuildID)
		if err != nil {
			return nil, err
		}
		out = append(out, VersionStatus{BuildID: v.Version.BuildID, Current: v.Version.BuildID == current,
			Drainage: drainage(v.DrainageStatus), Running: n})
	}
	return out, nil
}

// PinnedRunning counts the workflows pinned to a version that still run.
func PinnedRunning(ctx context.Context, c client.Client, deployment, build string) (int64, error) {
	resp, err := c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{
		Query: fmt.Sprintf("TemporalWorkerDeploymentVersion = '%s:%s' AND ExecutionStatus = 'Running'", deployment, build)})
	if err != nil {
		return 0, fmt.Errorf("count the runs pinned to %s:%s: %w", deployment, build, err)
	}
	return resp.GetCount(), nil
}

func drainage(s client.WorkerDeploymentVersionDrainageStatus) string {
	switch s {
	case client.WorkerDeploymentVersionDrainageStatusDraining:
		return "draining"
	case client.WorkerDeploymentVersionDrainageStatusDrained:
		return "drained"
	}
	return ""
}
