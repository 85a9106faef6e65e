// Package inspect reads a turn back from its workflow history (and, while
// it runs, its state query) into a view a person can follow step by step.
package inspect

import (
	"encoding/json"
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/nanobot-durable/nanobot/protocol"
)

// Turn is one run of a turn workflow as the history tells it.
type Turn struct {
	WorkflowID string `json:"workflow_id"`
	RunID      string `json:"run_id"`
	// Status is running, completed, failed, cancelled, terminated, timed out or continued as new.
	Status   string    `json:"status"`
	Started  time.Time `json:"started"`
	Closed   time.Time `json:"closed,omitzero"`
	Messages []string  `json:"messages"`
	// Current is the state a running turn is in (from the state query).
	Current    string                `json:"current,omitempty"`
	States     []protocol.TraceEntry `json:"states"`
	Iterations []Iteration           `json:"iterations"`
	Reply      string                `json:"reply,omitempty"`
	StopReason string                `json:"stop_reason,omitempty"`
	Error      string                `json:"error,omitempty"`
	Prompt     int                   `json:"prompt_tokens"`
	Completion int                   `json:"completion_tokens"`
	Cached     int                   `json:"cached_tokens,omitempty"`
	// Resumed: this run continued a turn whose history grew long.
	Resumed bool `json:"resumed,omitempty"`
	// Approvals are the answers the turn was signalled, in order.
	Approvals []Approval `json:"approvals,omitempty"`
}

// Approval is an answer to one of the turn's approval requests: who gave it and when.
type Approval struct {
	ID      string    `json:"id"`
	Verdict string    `json:"verdict"`
	By      string    `json:"by,omitempty"`
	Reason  string    `json:"reason,omitempty"`
	At      time.Time `json:"at"`
}

// Iteration is one model call and the tool calls it made.
type Iteration struct {
	N          int           `json:"n"`
	Call       int           `json:"call"`
	Mode       string        `json:"mode,omitempty"`
	Model      string        `json:"model"`
	Duration   time.Duration `json:"duration"`
	Attempts   int32         `json:"attempts"`
	Finish     string        `json:"finish_reason,omitempty"`
	Preview    string        `json:"preview,omitempty"`
	Prompt     int           `json:"prompt_tokens"`
	Completion int           `json:"completion_tokens"`
	Cached     int           `json:"cached_tokens,omitempty"`
	Error      string        `json:"error,omitempty"`
	Pending    bool          `json:"pending,omitempty"`
	Tools      []Tool        `json:"tools,omitempty"`
}

// Tool is one tool call and its outcome.
type Tool struct {
	ID       string        `json:"id"`
	Name     string        `json:"name"`
	Args     string        `json:"args,omitempty"`
	Duration time.Duration `json:"duration"`
	Outcome  string        `json:"outcome"` // ok, error, unknown, failed, running
	Attempts int32         `json:"attempts,omitempty"`
	Preview  string        `json:"preview,omitempty"`
}

// scheduled points at what an activity event belongs to, by index: the slices grow.
type scheduled struct {
	at   time.Time
	iter int
	tool int // -1 for a model call
}

// FromHistory builds the view of one run from its events.
func FromHistory(workflowID string, events []*historypb.HistoryEvent) (*Turn, error) {
	dc := converter.GetDefaultDataConverter()
	t := &Turn{WorkflowID: workflowID, Status: "running"}
	sched := map[int64]*scheduled{}
	args := map[string]string{}  // tool call ID → argument preview
	callIter := map[string]int{} // tool call ID → the iteration whose model call made it
	for _, ev := range events {
		at := ev.GetEventTime().AsTime()
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			a := ev.GetWorkflowExecutionStartedEventAttributes()
			t.RunID, t.Started = a.GetOriginalExecutionRunId(), at
			var in protocol.TurnInput
			if err := decode(dc, a.GetInput(), &in); err != nil {
				return nil, fmt.Errorf("turn input: %w", err)
			}
			for _, m := range in.Carry {
				t.Messages = append(t.Messages, m.Content)
			}
			if r := in.Resume; r != nil {
				t.Resumed, t.States = true, r.Trace
				t.Messages = append(t.Messages, r.Message.Content)
				t.Prompt, t.Completion, t.Cached = r.Runner.PromptTokens, r.Runner.CompletionTokens, r.Runner.CachedTokens
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			a := ev.GetWorkflowExecutionSignaledEventAttributes()
			var m protocol.Inbound
			if a.GetSignalName() == protocol.SignalInbound && decode(dc, a.GetInput(), &m) == nil {
				t.Messages = append(t.Messages, m.Content)
			}
			var ans protocol.ApprovalAnswer
			if a.GetSignalName() == protocol.SignalApproval && decode(dc, a.GetInput(), &ans) == nil {
				t.Approvals = append(t.Approvals, Approval{ID: ans.ID, Verdict: ans.Verdict, By: ans.By, Reason: ans.Reason, At: at})
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			a := ev.GetActivityTaskScheduledEventAttributes()
			s := &scheduled{at: at, tool: -1}
			switch a.GetActivityType().GetName() {
			case protocol.ActivityLLMCall:
				var in protocol.LLMCallInput
				_ = decode(dc, a.GetInput(), &in)
				it := Iteration{N: in.Iteration, Call: in.Call, Mode: in.Mode, Model: in.Settings.Model, Pending: true}
				if n := len(t.Iterations); n > 0 && in.Call > 0 && t.Iterations[n-1].Call == in.Call {
					t.Iterations[n-1] = it // the same call asked again on the LLM queue (the turn's worker was busy)
				} else {
					t.Iterations = append(t.Iterations, it)
				}
				s.iter = len(t.Iterations) - 1
			case protocol.ActivityTool:
				var in protocol.ToolCallInput
				_ = decode(dc, a.GetInput(), &in)
				s.iter = t.iteration(in.Iteration)
				it := &t.Iterations[s.iter]
				it.Tools = append(it.Tools, Tool{ID: in.CallID, Name: in.Name, Args: args[in.CallID], Outcome: "running"})
				s.tool = len(it.Tools) - 1
			default:
				continue
			}
			sched[ev.GetEventId()] = s
		case enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			a := ev.GetStartChildWorkflowExecutionInitiatedEventAttributes()
			var in protocol.SubagentInput
			if a.GetWorkflowType().GetName() != protocol.SubagentWorkflowName || decode(dc, a.GetInput(), &in) != nil {
				continue
			}
			// A spawn call runs in the workflow, not as a tool activity: its subagent's start is the call.
			i := len(t.Iterations) - 1
			if at, ok := callIter[in.Spawn.CallID]; ok {
				i = at
			}
			if i < 0 {
				continue
			}
			t.Iterations[i].Tools = append(t.Iterations[i].Tools, Tool{ID: in.Spawn.CallID, Name: "spawn", Args: args[in.Spawn.CallID], Outcome: "ok"})
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			a := ev.GetActivityTaskStartedEventAttributes()
			if s := sched[a.GetScheduledEventId()]; s != nil && s.tool < 0 {
				t.Iterations[s.iter].Attempts = a.GetAttempt()
			} else if s != nil {
				t.Iterations[s.iter].Tools[s.tool].Attempts = a.GetAttempt()
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			a := ev.GetActivityTaskCompletedEventAttributes()
			s := sched[a.GetScheduledEventId()]
			if s == nil {
				continue
			}
			if s.tool < 0 {
				var res protocol.LLMCallResult
				_ = decode(dc, a.GetResult(), &res)
				it := &t.Iterations[s.iter]
				it.Pending, it.Duration, it.Finish, it.Preview = false, at.Sub(s.at), res.FinishReason, res.ContentPreview
				it.Prompt, it.Completion, it.Cached = res.PromptTokens, res.CompletionTokens, res.CachedTokens
				if res.Model != "" {
					it.Model = res.Model
				}
				for _, c := range res.ToolCalls {
					args[c.ID], callIter[c.ID] = c.ArgsPreview, s.iter
				}
				t.Prompt += res.PromptTokens
				t.Completion += res.CompletionTokens
				t.Cached += res.CachedTokens
			} else {
				var res protocol.ToolCallResult
				_ = decode(dc, a.GetResult(), &res)
				tl := &t.Iterations[s.iter].Tools[s.tool]
				tl.Duration, tl.Preview, tl.Outcome = at.Sub(s.at), res.Preview, "ok"
				switch {
				case res.Unknown:
					tl.Outcome = "unknown"
				case res.IsError:
					tl.Outcome = "error"
				}
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED, enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT, enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
			id, msg := closedActivity(ev)
			if s := sched[id]; s != nil {
				if it := &t.Iterations[s.iter]; s.tool < 0 {
					it.Pending, it.Duration, it.Error = false, at.Sub(s.at), msg
				} else {
					tl := &it.Tools[s.tool]
					tl.Duration, tl.Outcome, tl.Preview = at.Sub(s.at), "failed", msg
				}
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
			t.Status, t.Closed = "completed", at
			var res protocol.TurnResult
			if err := decode(dc, ev.GetWorkflowExecutionCompletedEventAttributes().GetResult(), &res); err == nil {
				t.States, t.Reply, t.StopReason = res.Trace, res.ReplyPreview, res.StopReason
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
			t.Status, t.Closed = "failed", at
			t.Error = ev.GetWorkflowExecutionFailedEventAttributes().GetFailure().GetMessage()
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
			t.Status, t.Closed, t.StopReason = "cancelled", at, protocol.StopCancelled
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
			t.Status, t.Closed = "terminated", at
			t.Error = ev.GetWorkflowExecutionTerminatedEventAttributes().GetReason()
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
			t.Status, t.Closed = "timed out", at
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
			t.Status, t.Closed = "continued as new", at
			var next protocol.TurnInput
			if err := decode(dc, ev.GetWorkflowExecutionContinuedAsNewEventAttributes().GetInput(), &next); err == nil && next.Resume != nil {
				t.States = next.Resume.Trace
			}
		}
	}
	if t.RunID == "" {
		return nil, fmt.Errorf("%s: the history has no start event", workflowID)
	}
	return t, nil
}

// WithState adds what the state query of a running turn says.
func (t *Turn) WithState(s protocol.TurnState) {
	t.Current = s.State
	if len(s.Trace) > 0 {
		t.States = s.Trace
	}
}

// iteration finds the model call of iteration n (the last, for recoveries), or adds one.
func (t *Turn) iteration(n int) int {
	for i := len(t.Iterations) - 1; i >= 0; i-- {
		if t.Iterations[i].N == n {
			return i
		}
	}
	t.Iterations = append(t.Iterations, Iteration{N: n})
	return len(t.Iterations) - 1
}

func closedActivity(ev *historypb.HistoryEvent) (int64, string) {
	if a := ev.GetActivityTaskFailedEventAttributes(); a != nil {
		return a.GetScheduledEventId(), a.GetFailure().GetMessage()
	}
	if a := ev.GetActivityTaskTimedOutEventAttributes(); a != nil {
		return a.GetScheduledEventId(), "timed out: " + a.GetFailure().GetMessage()
	}
	a := ev.GetActivityTaskCanceledEventAttributes()
	return a.GetScheduledEventId(), "cancelled"
}

func decode(dc converter.DataConverter, p *commonpb.Payloads, out any) error {
	if p == nil || len(p.GetPayloads()) == 0 {
		return nil
	}
	if err := dc.FromPayloads(p, out); err != nil {
		// An older payload shape still shows what it can.
		return json.Unmarshal(p.GetPayloads()[0].GetData(), out)
	}
	return nil
}
