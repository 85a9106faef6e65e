package workers

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/media"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/tools"
)

// messageWait is how long the message tool waits to see its send
// delivered; past it the send stays queued for the channel's gateway.
const messageWait = 30 * time.Second

// messageSender sends the message tool's messages through Temporal: a
// MessageWorkflow runs Deliver on the queue of whoever owns the target
// chat, so the send is retried and lands where the connection lives.
type messageSender struct {
	client   client.Client
	instance protocol.Instance
	// media shares the attachments, for the gateway that sends them.
	media media.Store
	wait  time.Duration
	// attempts is channels.sendMaxRetries (0: the delivery default).
	attempts int32
}

// SendMessage implements tools.MessageSender.
func (m *messageSender) SendMessage(ctx context.Context, env tools.Env, to protocol.Route, content string, files []string) (bool, error) {
	if !channels.IsKnown(to.Channel) {
		return false, fmt.Errorf("unknown channel %q (known: %v)", to.Channel, channels.Known())
	}
	if err := media.ShareAll(ctx, m.media, files); err != nil {
		return false, fmt.Errorf("attachments: %w", err)
	}
	key := env.SessionKey
	if !to.SameChat(env.Route) {
		key = protocol.SessionKey(to.Channel, to.ChatID)
	}
	in := protocol.MessageInput{Deliver: protocol.DeliverInput{
		SessionKey: key, Turn: env.Turn + "/" + env.CallID, Route: to,
		Text: content, Media: files, Kind: protocol.ReplyMessage, MaxAttempts: m.attempts,
	}}
	opts := client.StartWorkflowOptions{
		ID:                       m.instance.Name("message/" + env.SessionKey + "/" + env.Turn + "/" + env.CallID),
		TaskQueue:                m.instance.TaskQueue(),
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		StaticSummary:            "message to " + to.String(),
	}
	run, err := m.client.ExecuteWorkflow(ctx, opts, protocol.MessageWorkflowName, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		run, err = m.client.GetWorkflow(ctx, opts.ID, ""), nil // a retried call: that send already ran
	}
	if err != nil {
		return false, fmt.Errorf("start delivery to %s: %w", to, err)
	}
	wait := m.wait
	if wait <= 0 {
		wait = messageWait
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	err = run.Get(wctx, nil)
	switch {
	case err == nil:
		return false, nil
	case wctx.Err() != nil && ctx.Err() == nil:
		return true, nil // still waiting for a gateway that holds the channel
	default:
		return false, fmt.Errorf("%s did not take the message: %w", to, err)
	}
}
