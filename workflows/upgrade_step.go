package workflows

import "go.temporal.io/sdk/workflow"

// upgradeStep is where the upgrade test's second binary (built with
// -tags upgradetest) adds a workflow change; the normal build does nothing
// here. It is fixed per binary, so replay stays deterministic.
var upgradeStep = func(workflow.Context) {}

// UpgradeTestChange is the marker of the change the upgrade test deploys
// under runs in flight, as the README's "Changing workflow code" asks.
const UpgradeTestChange = "upgradetest-extra-timer"
