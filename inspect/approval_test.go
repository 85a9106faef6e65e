package inspect

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/nanobot-durable/nanobot/protocol"
)

func TestApprovalAnswersSayWhoAndWhen(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	payloads := func(v any) *commonpb.Payloads {
		p, err := dc.ToPayloads(v)
		require.NoError(t, err)
		return p
	}
	start := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	events := []*historypb.HistoryEvent{
		{EventId: 1, EventTime: timestamppb.New(start), EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
			Attributes: &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{
				OriginalExecutionRunId: "run-1", Input: payloads(protocol.TurnInput{SessionKey: "web:a"}),
			}}},
		{EventId: 2, EventTime: timestamppb.New(start.Add(90 * time.Second)), EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
			Attributes: &historypb.HistoryEvent_WorkflowExecutionSignaledEventAttributes{WorkflowExecutionSignaledEventAttributes: &historypb.WorkflowExecutionSignaledEventAttributes{
				SignalName: protocol.SignalApproval, Input: payloads(protocol.ApprovalAnswer{ID: "ab12", Verdict: protocol.VerdictDeny, By: "telegram:42", Reason: "not now"}),
			}}},
	}
	turn, err := FromHistory("turn/web:a", events)
	require.NoError(t, err)
	require.Equal(t, []Approval{{ID: "ab12", Verdict: protocol.VerdictDeny, By: "telegram:42", Reason: "not now", At: start.Add(90 * time.Second)}}, turn.Approvals)
	var out bytes.Buffer
	require.NoError(t, Render(&out, turn, Options{Location: time.UTC}))
	require.Contains(t, out.String(), "Approval: ab12 deny by telegram:42 at 14:01:30 — not now\n")
}
