package web

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/inspect"
	"github.com/nanobot-durable/nanobot/protocol"
)

// TurnNow is where a session's turn is, as a reconnecting page shows it.
type TurnNow struct {
	Running   bool     `json:"running"`
	RunID     string   `json:"run_id,omitempty"`
	State     string   `json:"state,omitempty"`
	Iteration int      `json:"iteration,omitempty"`
	Hints     []string `json:"hints,omitempty"`
	// Waiting is the approval request the turn waits on: a page that
	// opens meanwhile draws it with its buttons.
	Waiting *approvalView `json:"waiting,omitempty"`
	// Details are the turn's current details (SetCurrentDetails): the step and the last model call.
	Details string `json:"details,omitempty"`
	// Retry is the call Temporal is retrying, if one is.
	Retry *retryView `json:"retry,omitempty"`
	// Queued are the messages waiting behind this turn.
	Queued []protocol.QueuedMessage `json:"queued,omitempty"`
}

// Turns tells where a session's turn is now.
type Turns interface {
	Now(ctx context.Context, sessionKey string) (TurnNow, error)
}

// TemporalTurns asks Temporal: the turn workflow's status, then its state query.
type TemporalTurns struct {
	Client   sdkclient.Client
	Instance protocol.Instance
}

// Now implements Turns.
func (t TemporalTurns) Now(ctx context.Context, sessionKey string) (TurnNow, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	id := t.Instance.TurnWorkflowID(sessionKey)
	desc, err := t.Client.DescribeWorkflowExecution(ctx, id, "")
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return TurnNow{}, nil
	}
	if err != nil {
		return TurnNow{}, fmt.Errorf("describe %s: %w", id, err)
	}
	info := desc.GetWorkflowExecutionInfo()
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return TurnNow{}, nil
	}
	now := TurnNow{Running: true, RunID: info.GetExecution().GetRunId(), Retry: retryOf(desc.GetPendingActivities(), time.Now())}
	v, err := t.Client.QueryWorkflow(ctx, id, now.RunID, protocol.QueryState)
	if err != nil {
		return now, nil // running but not answering yet (no worker): still running
	}
	var st protocol.TurnState
	if err := v.Get(&st); err != nil {
		return now, fmt.Errorf("read the state of %s: %w", id, err)
	}
	now.State, now.Iteration, now.Hints, now.Waiting, now.Queued = st.State, st.Iteration, st.Hints, viewOf(st.Waiting), st.Queued
	now.Details = t.currentDetails(ctx, id, now.RunID)
	return now, nil
}

// TurnHistories reads what a turn did from Temporal (TemporalTurns does).
type TurnHistories interface {
	Details(ctx context.Context, sessionKey, runID string) (*inspect.Turn, error)
}

// Details implements TurnHistories: the run's history and, while it runs, its state.
func (t TemporalTurns) Details(ctx context.Context, sessionKey, runID string) (*inspect.Turn, error) {
	turn, _, err := inspect.Load(ctx, t.Client, t.Instance.TurnWorkflowID(sessionKey), runID)
	return turn, err
}
