package web

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	failurepb "go.temporal.io/api/failure/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/nanobot-durable/nanobot/protocol"
)

func TestRetryOfNamesTheCallItsAttemptAndTheWait(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	first := &workflowpb.PendingActivityInfo{ActivityType: &commonpb.ActivityType{Name: protocol.ActivityTool}, Attempt: 1}
	require.Nil(t, retryOf([]*workflowpb.PendingActivityInfo{first}, now), "a first attempt is no retry")

	retried := &workflowpb.PendingActivityInfo{
		ActivityType: &commonpb.ActivityType{Name: protocol.ActivityLLMCall}, Attempt: 3, MaximumAttempts: 5,
		LastFailure: &failurepb.Failure{Message: "503 overloaded"}, NextAttemptScheduleTime: timestamppb.New(now.Add(8 * time.Second)),
	}
	got := retryOf([]*workflowpb.PendingActivityInfo{first, retried}, now)
	require.Equal(t, &retryView{What: "the model call", Attempt: 3, Max: 5, NextInMS: 8000, LastError: "503 overloaded"}, got)

	retried.NextAttemptScheduleTime = timestamppb.New(now.Add(-time.Second))
	require.Zero(t, retryOf([]*workflowpb.PendingActivityInfo{retried}, now).NextInMS, "the attempt runs now")
}

func TestLivePusherSendsChangesNotTheCountdown(t *testing.T) {
	var p livePusher
	now := TurnNow{Running: true, State: "RUN", Retry: &retryView{What: "the model call", Attempt: 2, NextInMS: 4000}}
	require.True(t, p.changed(now))
	now.Retry = &retryView{What: "the model call", Attempt: 2, NextInMS: 3000}
	require.False(t, p.changed(now), "the page counts down itself")
	now.Retry = &retryView{What: "the model call", Attempt: 2}
	require.True(t, p.changed(now), "the attempt started")
	now.Queued = []protocol.QueuedMessage{{ID: "web-1", Preview: "then"}}
	require.True(t, p.changed(now))
	sent := &retryView{What: "the model call", Attempt: 3, NextInMS: 4000}
	require.True(t, p.changed(TurnNow{Running: true, Retry: sent}))
	require.Equal(t, int64(4000), sent.NextInMS, "what is pushed keeps its countdown")
}
