package workflows

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// deliveries records every Deliver the turn makes.
type deliveries struct {
	mu  sync.Mutex
	ins []protocol.DeliverInput
}

func (d *deliveries) mock(fail func(protocol.DeliverInput) error) func(context.Context, protocol.DeliverInput) error {
	return func(_ context.Context, in protocol.DeliverInput) error {
		d.mu.Lock()
		d.ins = append(d.ins, in)
		d.mu.Unlock()
		if fail != nil {
			return fail(in)
		}
		return nil
	}
}

func textReply(text string) protocol.LLMCallResult { return textReplyAt("llm-1", text) }

func textReplyAt(entry, text string) protocol.LLMCallResult {
	return protocol.LLMCallResult{EntryID: entry, ContentPreview: text, ContentChars: len(text), FinishReason: "stop"}
}

func TestReplyKeepsTheSlackThread(t *testing.T) {
	env := newEnv(t)
	thread := protocol.Route{Channel: "slack", ChatID: "C1", ThreadID: "1700.42", SenderID: "U7"}
	sendAtStart(env, protocol.Inbound{ID: "m1", SessionKey: "slack:C1", Route: thread, Content: "hi"})
	var llmRoute, toolRoute protocol.Route
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.MatchedBy(func(in protocol.LLMCallInput) bool { return in.Iteration == 1 })).Return(
		func(_ context.Context, in protocol.LLMCallInput) (protocol.LLMCallResult, error) {
			llmRoute = in.Route
			return protocol.LLMCallResult{EntryID: "llm-1", FinishReason: "tool_calls", ToolCalls: []protocol.ToolCallRef{{ID: "c1", Name: "read_file"}}}, nil
		})
	drawn := textReplyAt("llm-2", "Hello")
	drawn.Drawn = "1700.99" // the gateway that ran the call streamed it into this message
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.MatchedBy(func(in protocol.LLMCallInput) bool { return in.Iteration == 2 })).Return(drawn, nil)
	env.OnActivity(protocol.ActivityTool, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.ToolCallInput) (protocol.ToolCallResult, error) {
			toolRoute = in.Route
			return protocol.ToolCallResult{Preview: "ok"}, nil
		})
	var d deliveries
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(d.mock(nil))

	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "slack:C1", Settings: testenv.Settings(protocol.Settings{})})
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, thread, llmRoute, "the model call streams to the thread")
	require.Equal(t, thread, toolRoute, "tools see the thread (message tool, progress)")
	require.Len(t, d.ins, 1)
	require.Equal(t, thread, d.ins[0].Route)
	require.Equal(t, "llm-2", d.ins[0].EntryID)
	require.Equal(t, "1700.99", d.ins[0].Drawn, "whoever delivers edits the streamed message instead of posting anew")
}

func TestUnifiedSessionAnswersEachRouteOnce(t *testing.T) {
	env := newEnv(t)
	tg := protocol.Route{Channel: "telegram", ChatID: "42", ReplyTo: "7"}
	sl := protocol.Route{Channel: "slack", ChatID: "C1"}
	// The second and third messages arrive while the first is being answered: they are injected.
	got := unifiedDeliveries(t, env, tg, sl, tg)
	require.Len(t, got, 3)
	require.Equal(t, "telegram:42=m1 drawn", got[0], "the first answer goes to m1's chat, where it was streamed")
	require.ElementsMatch(t, []string{"slack:C1=m2", "telegram:42=m3 drawn"}, got[1:],
		"after the injection, the second answer reaches m2 and m3, each in its own chat; only the origin's chat saw the stream")
}

// unifiedDeliveries runs a unified session's turn answering one message
// per route (m1, m2, …; all but the first injected) and names each
// delivery as route=message ids.
func unifiedDeliveries(t *testing.T, env *testsuite.TestWorkflowEnvironment, routes ...protocol.Route) []string {
	var msgs []protocol.Inbound
	for i, r := range routes {
		msgs = append(msgs, protocol.Inbound{ID: fmt.Sprintf("m%d", i+1), SessionKey: "unified:default", Route: r, Content: "hi"})
	}
	sendAtStart(env, msgs...)
	reply := textReply("ok")
	reply.Drawn = "d1" // streamed into the origin's chat
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.Anything).Return(reply, nil)
	var d deliveries
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(d.mock(nil))
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "unified:default", Settings: testenv.Settings(protocol.Settings{})})
	require.NoError(t, env.GetWorkflowError())
	var got []string
	for _, in := range d.ins {
		drawn := ""
		if in.Drawn != "" {
			drawn = " drawn"
		}
		got = append(got, in.Route.String()+"="+join(in.MessageIDs)+drawn)
	}
	return got
}

func join(ids []string) string {
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ","
		}
		s += id
	}
	return s
}

func TestMessageToolAnswerIsNotSentTwice(t *testing.T) {
	env := newEnv(t)
	tg := protocol.Route{Channel: "telegram", ChatID: "42"}
	sendAtStart(env, protocol.Inbound{ID: "m1", SessionKey: "telegram:42", Route: tg, Content: "tell me"})
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.MatchedBy(func(in protocol.LLMCallInput) bool { return in.Iteration == 1 })).Return(
		protocol.LLMCallResult{EntryID: "llm-1", FinishReason: "tool_calls", ToolCalls: []protocol.ToolCallRef{{ID: "c1", Name: "message"}}}, nil)
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.MatchedBy(func(in protocol.LLMCallInput) bool { return in.Iteration == 2 })).Return(textReplyAt("llm-2", "Sent it."), nil)
	env.OnActivity(protocol.ActivityTool, mock.Anything, mock.Anything).Return(protocol.ToolCallResult{Preview: "Message sent to telegram:42", AnsweredOrigin: true}, nil)
	var d deliveries
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(d.mock(nil))
	var saved protocol.SaveInput
	env.OnActivity(protocol.ActivitySave, mock.Anything, mock.Anything).Return(func(_ context.Context, in protocol.SaveInput) error { saved = in; return nil })

	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "telegram:42", Settings: testenv.Settings(protocol.Settings{})})
	require.NoError(t, env.GetWorkflowError())
	require.Empty(t, d.ins, "the message tool already answered the chat")
	require.Equal(t, "llm-2", saved.FinalEntry, "the final reply is still journaled")
}

func TestReplyToAGoneCLIIsMarkedNotRetried(t *testing.T) {
	env := newEnv(t)
	cli := protocol.Route{Channel: "cli", ChatID: "direct", Queue: "nanobot-cli-gone"}
	sendAtStart(env, protocol.Inbound{ID: "m1", SessionKey: "cli:direct", Route: cli, Content: "hi"})
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.Anything).Return(textReply("Hello"), nil)
	var d deliveries
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(d.mock(func(protocol.DeliverInput) error {
		return temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
	}))
	var marked []protocol.DeliverInput
	env.OnActivity(protocol.ActivityMarkUndelivered, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in protocol.DeliverInput) error { marked = append(marked, in); return nil })

	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{})})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, d.ins, 1)
	require.Len(t, marked, 1, "the next CLI of the session shows it")
	require.Equal(t, "llm-1", marked[0].EntryID)
}

// A delivery to a CLI that died before reporting it is given up in
// seconds, not after the 2 minutes a platform's API may take.
func TestADeliveryToAProcessRunsBriefly(t *testing.T) {
	env := newEnv(t)
	cli := protocol.Route{Channel: "cli", ChatID: "direct", Queue: "nanobot-cli-1"}
	sendAtStart(env, protocol.Inbound{ID: "m1", SessionKey: "cli:direct", Route: cli, Content: "hi"})
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.Anything).Return(textReply("Hello"), nil)
	var runFor time.Duration
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, _ protocol.DeliverInput) error {
			runFor = activity.GetInfo(ctx).StartToCloseTimeout
			return nil
		})
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{})})
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, perProcessDeliveryRun, runFor)
	require.Less(t, runFor, channelDeliveryRun)
}

func TestRouteWithoutAProcessGetsNoDelivery(t *testing.T) {
	env := newEnv(t)
	sendAtStart(env, protocol.Inbound{ID: "m1", SessionKey: "cli:script", Route: protocol.Route{Channel: "cli", ChatID: "script"}, Content: "hi"})
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.Anything).Return(textReply("Hello"), nil)
	var d deliveries
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(d.mock(nil))
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:script", Settings: testenv.Settings(protocol.Settings{})})
	require.NoError(t, env.GetWorkflowError())
	require.Empty(t, d.ins)
}

// A message that arrives while the reply is being delivered must start the
// next turn, not vanish with a run that ends. (The test environment gives the
// signal a workflow task of its own; the race with the run's last task is
// hit at the wire by integration/TestAPIBackToBackRequestsOfOneSession.)
func TestMessageDuringDeliveryIsCarriedOver(t *testing.T) {
	env := newEnv(t)
	sendAtStart(env, inbound("m1", "first"))
	env.OnActivity(protocol.ActivityLLMCall, mock.Anything, mock.Anything).Return(textReply("one"), nil)
	env.OnActivity(protocol.ActivityDeliver, mock.Anything, mock.Anything).Return(func(_ context.Context, in protocol.DeliverInput) error {
		env.SignalWorkflow(protocol.SignalInbound, inbound("m2", "sent as the reply arrived"))
		return nil
	})
	env.ExecuteWorkflow(protocol.TurnWorkflowName, protocol.TurnInput{SessionKey: "cli:direct", Settings: testenv.Settings(protocol.Settings{})})
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can, "the run hands m2 to the next one")
	var next protocol.TurnInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	require.Len(t, next.Carry, 1)
	require.Equal(t, "m2", next.Carry[0].ID)
}

// TestDeliveryFollowsTheStamp: the turn delivers as a route is stamped,
// whatever the process-global map of per-process channels says (this
// binary marks cli per-process): a cli route stamped someone is answered,
// a telegram route stamped nobody is not; an unstamped route of a run in
// flight and a stamped one of the same chat are one delivery.
func TestDeliveryFollowsTheStamp(t *testing.T) {
	require.False(t, protocol.Route{Channel: "cli", ChatID: "x"}.Deliverable(), "the map marks cli per-process")
	cli := protocol.Route{Channel: "cli", ChatID: "x", Reach: protocol.ReachSomeone}
	nobody := protocol.Route{Channel: "telegram", ChatID: "7", Reach: protocol.ReachNobody}
	old := protocol.Route{Channel: "telegram", ChatID: "42"}
	stamped := old
	stamped.Reach = protocol.ReachSomeone
	got := unifiedDeliveries(t, newEnv(t), cli, nobody, old, stamped)
	require.ElementsMatch(t, []string{"cli:x=m1 drawn", "telegram:42=m3,m4"}, got, "m2's route has nobody to answer")
}
