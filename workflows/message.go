package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/protocol"
)

// MessageWorkflow delivers one message tool send on the queue of the
// process that owns the chat. Its ID is derived from the tool call, so a
// retried call finds this run instead of sending twice.
func MessageWorkflow(ctx workflow.Context, in protocol.MessageInput) error {
	return workflow.ExecuteActivity(deliverCtx(ctx, in.Deliver), protocol.ActivityDeliver, in.Deliver).Get(ctx, nil)
}
