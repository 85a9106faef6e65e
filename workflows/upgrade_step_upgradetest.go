//go:build upgradetest

package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// The change: one extra timer before a run's first state. Runs started
// by the first binary replay without it (no marker in their history);
// runs that reach this point on this binary record the marker and the timer.
func init() {
	upgradeStep = func(ctx workflow.Context) {
		if workflow.GetVersion(ctx, UpgradeTestChange, workflow.DefaultVersion, 1) == 1 {
			_ = workflow.Sleep(ctx, time.Millisecond)
		}
	}
}
