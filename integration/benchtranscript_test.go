package integration

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/tools"
)

// The shape the well-known Temporal agent samples use, for B3's comparison:
// the whole transcript goes into every model activity and the reply comes
// back out, so history grows with the context. Bench code only.

const transcriptQueue = "bench-transcript"

type transcriptIn struct {
	Messages      []chat.Message `json:"messages"`
	MaxIterations int            `json:"max_iterations"`
}

func transcriptTurn(ctx workflow.Context, in transcriptIn) (int, error) {
	ao := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	msgs := in.Messages
	for i := 1; i <= in.MaxIterations; i++ {
		var reply chat.Message
		if err := workflow.ExecuteActivity(ao, "TranscriptModel", msgs).Get(ctx, &reply); err != nil {
			return i, err
		}
		msgs = append(msgs, reply)
		if len(reply.ToolCalls) == 0 {
			return i, nil
		}
		for _, c := range reply.ToolCalls {
			var out chat.Message
			if err := workflow.ExecuteActivity(ao, "TranscriptTool", c).Get(ctx, &out); err != nil {
				return i, err
			}
			msgs = append(msgs, out)
		}
	}
	return in.MaxIterations, nil
}

// startTranscriptWorker runs the transcript-passing turn on the bench's activities.
func (b *benchEnv) startTranscriptWorker() func() {
	w := worker.New(b.dev.Client, transcriptQueue, worker.Options{})
	w.RegisterWorkflowWithOptions(transcriptTurn, workflow.RegisterOptions{Name: "TranscriptTurn"})
	w.RegisterActivityWithOptions(func(ctx context.Context, msgs []chat.Message) (chat.Message, error) {
		m, err := b.deps.Models.Model("test-model")
		if err != nil {
			return chat.Message{}, err
		}
		resp, err := m.Provider.Chat(ctx, providers.Request{Model: m.APIModel, Messages: msgs, Tools: b.deps.Tools.Definitions()}, nil)
		if err != nil {
			return chat.Message{}, err
		}
		return chat.Message{Role: chat.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls, FinishReason: resp.FinishReason}, nil
	}, activity.RegisterOptions{Name: "TranscriptModel"})
	w.RegisterActivityWithOptions(func(ctx context.Context, c chat.ToolCall) (chat.Message, error) {
		res := b.deps.Tools.Execute(ctx, tools.Env{Workspace: b.deps.Workspace}, c.Function.Name, c.Function.Arguments)
		return chat.Message{Role: chat.RoleTool, ToolCallID: c.ID, Name: c.Function.Name, Content: res.Text}, nil
	}, activity.RegisterOptions{Name: "TranscriptTool"})
	if err := w.Start(); err != nil {
		panic(fmt.Sprintf("transcript worker: %v", err))
	}
	return w.Stop
}
