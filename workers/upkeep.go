package workers

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"

	"github.com/nanobot-durable/nanobot/activities"
	"github.com/nanobot-durable/nanobot/protocol"
)

// registerUpkeep adds memory upkeep to the turn worker: the post-SAVE
// measure (consolidation itself runs on the LLM queue).
func registerUpkeep(w worker.Worker, acts *activities.Activities) {
	w.RegisterActivityWithOptions(acts.Measure, activity.RegisterOptions{Name: protocol.ActivityMeasure})
}
