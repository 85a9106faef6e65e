package workers

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/tools"
)

// messageSender sends the message tool's messages through Temporal: a
// MessageWorkflow runs Deliver on the queue of the process that owns the
// chat, so the send is retried and lands where the connection lives.
type messageSender struct {
	client client.Client
	store  session.Store
}

// SendMessage implements tools.MessageSender.
func (m *messageSender) SendMessage(ctx context.Context, env tools.Env, channel, chatID, content string, media []string) error {
	queue := protocol.ChannelQueue(channel)
	if protocol.SessionKey(channel, chatID) == env.SessionKey {
		sess, err := m.store.Load(ctx, env.SessionKey)
		if err != nil {
			return err
		}
		if q, _ := sess.Metadata[protocol.ReplyQueueKey].(string); q != "" {
			queue = q // the process that sent this session's last message
		}
	}
	text := content
	for _, f := range media {
		text += "\n[attachment: " + f + "]"
	}
	in := protocol.MessageInput{Queue: queue, Deliver: protocol.DeliverInput{
		SessionKey: protocol.SessionKey(channel, chatID), Turn: env.Turn + "/" + env.CallID,
		Channel: channel, ChatID: chatID, Text: text, StopReason: "message",
	}}
	opts := client.StartWorkflowOptions{
		ID:                       "message/" + env.SessionKey + "/" + env.Turn + "/" + env.CallID,
		TaskQueue:                protocol.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}
	run, err := m.client.ExecuteWorkflow(ctx, opts, protocol.MessageWorkflowName, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		run, err = m.client.GetWorkflow(ctx, opts.ID, ""), nil // a retried call: that send already ran
	}
	if err != nil {
		return fmt.Errorf("start delivery to %s:%s: %w", channel, chatID, err)
	}
	if err := run.Get(ctx, nil); err != nil {
		return fmt.Errorf("%s:%s did not take the message (is its channel connected?): %w", channel, chatID, err)
	}
	return nil
}
