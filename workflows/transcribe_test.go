package workflows

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

func stubTranscribe(context.Context, protocol.StepInput) (protocol.TranscribeResult, error) {
	return protocol.TranscribeResult{}, nil
}

// TestVoiceNoteIsTranscribedBeforeBuild: a message with audio gets one
// Transcribe before BUILD and its hint goes to the chat before the answer.
func TestVoiceNoteIsTranscribedBeforeBuild(t *testing.T) {
	env := newEnv(t)
	env.RegisterActivityWithOptions(stubTranscribe, activity.RegisterOptions{Name: protocol.ActivityTranscribe})
	msg := inbound("m1", "")
	msg.Media = []string{"/ws/media/telegram-u1-voice.ogg"}
	sendAtStart(env, msg)
	var order []string
	env.OnActivity(protocol.ActivityTranscribe, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.StepInput) (protocol.TranscribeResult, error) {
			order = append(order, "transcribe")
			require.Equal(t, msg.Media, in.Message.Media)
			return protocol.TranscribeResult{Hints: []string{protocol.HintRecordingTooLong}}, nil
		}).Once()
	env.OnActivity(protocol.ActivityBuild, mock.Anything, mock.Anything).Return(
		func(context.Context, protocol.StepInput) (protocol.BuildResult, error) {
			order = append(order, "build")
			return protocol.BuildResult{}, nil
		}).Once()
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.Anything).Return(
		protocol.LLMCallResult{EntryID: "llm-1", ContentPreview: "ok", ContentChars: 2, FinishReason: "stop"}, nil).Once()
	var delivered []protocol.DeliverInput
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.DeliverInput) error { delivered = append(delivered, in); return nil }).Times(2)

	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{})})
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, []string{"transcribe", "build"}, order)
	require.Len(t, delivered, 2)
	require.Equal(t, protocol.HintRecordingTooLong, delivered[0].Text)
	require.Equal(t, protocol.ReplyMessage, delivered[0].Kind, "the hint does not close the turn in the chat")
	require.Equal(t, "llm-1", delivered[1].EntryID)
	env.AssertExpectations(t)
}

// TestTextMessageSchedulesNoTranscribe: without audio the turn's commands
// are what they were, so runs in flight replay unchanged.
func TestTextMessageSchedulesNoTranscribe(t *testing.T) {
	env := newEnv(t)
	env.RegisterActivityWithOptions(stubTranscribe, activity.RegisterOptions{Name: protocol.ActivityTranscribe})
	msg := inbound("m1", "see the picture")
	msg.Media = []string{"/ws/media/photo.jpg"}
	sendAtStart(env, msg)
	called := false
	env.OnActivity(protocol.ActivityTranscribe, mock.Anything, mock.Anything).Return(
		func(context.Context, protocol.StepInput) (protocol.TranscribeResult, error) {
			called = true
			return protocol.TranscribeResult{}, nil
		}).Maybe()
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.Anything).Return(
		protocol.LLMCallResult{EntryID: "llm-1", ContentPreview: "ok", ContentChars: 2, FinishReason: "stop"}, nil).Once()
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{})})
	require.NoError(t, env.GetWorkflowError())
	require.False(t, called)
}
