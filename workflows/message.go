package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/protocol"
)

// MessageWorkflow delivers one message tool send on the queue of the
// process that owns the chat. Its ID is derived from the tool call, so a
// retried call finds this run instead of sending twice.
func MessageWorkflow(ctx workflow.Context, in protocol.MessageInput) error {
	route := in.Deliver.Route
	if in.Queue != "" {
		route.Queue = in.Queue // a run started before routes carried the queue
	}
	return workflow.ExecuteActivity(deliverCtx(ctx, route), protocol.ActivityDeliver, in.Deliver).Get(ctx, nil)
}
