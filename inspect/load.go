package inspect

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/protocol"
)

// ErrNoTurn is a workflow (or run) Temporal does not know.
var ErrNoTurn = errors.New("no such turn")

// stateTimeout bounds the state query of a running turn (no worker: no answer).
const stateTimeout = 5 * time.Second

// Load reads one run of a turn workflow (runID "": the latest) from its
// history and, while it runs, its state query; a state query that is not
// answered leaves the state empty (the turn's worker may be down).
func Load(ctx context.Context, c sdkclient.Client, workflowID, runID string) (*Turn, protocol.TurnState, error) {
	var st protocol.TurnState
	var events []*historypb.HistoryEvent
	it := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil, st, fmt.Errorf("%s: %w", workflowID, ErrNoTurn)
		}
		if err != nil {
			return nil, st, fmt.Errorf("history of %s: %w", workflowID, err)
		}
		events = append(events, ev)
	}
	t, err := FromHistory(workflowID, events)
	if err != nil {
		return nil, st, err
	}
	if t.Status == "running" {
		qctx, cancel := context.WithTimeout(ctx, stateTimeout)
		defer cancel()
		if v, err := c.QueryWorkflow(qctx, workflowID, t.RunID, protocol.QueryState); err == nil && v.Get(&st) == nil {
			t.WithState(st)
		}
	}
	return t, st, nil
}
