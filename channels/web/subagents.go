package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/nanobot-durable/nanobot/protocol"
)

// RunningSubagent is a subagent at work, as the schedules page lists it.
type RunningSubagent struct {
	ID      string    `json:"id"`
	Label   string    `json:"label"`
	Origin  string    `json:"origin"` // the session that spawned it
	Started time.Time `json:"started"`
	// State and Iteration are where its loop is (empty: it does not answer yet).
	State     string `json:"state,omitempty"`
	Iteration int    `json:"iteration,omitempty"`
}

// Subagents lists this instance's running subagents (TemporalTurns does).
type Subagents interface {
	Running(ctx context.Context) ([]RunningSubagent, error)
}

// Running implements Subagents: the running SubagentWorkflows, their memo, and their state query.
func (t TemporalTurns) Running(ctx context.Context) ([]RunningSubagent, error) {
	resp, err := t.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		PageSize: maxRunningTurns,
		Query:    "WorkflowType = '" + protocol.SubagentWorkflowName + "' AND ExecutionStatus = 'Running'",
	})
	if err != nil {
		return nil, fmt.Errorf("list the running subagents: %w", err)
	}
	prefix := t.Instance.Name(protocol.SubagentWorkflowID(""))
	dc := converter.GetDefaultDataConverter()
	out := []RunningSubagent{}
	for _, e := range resp.GetExecutions() {
		id, ours := strings.CutPrefix(e.GetExecution().GetWorkflowId(), prefix)
		if !ours || id == "" {
			continue
		}
		s := RunningSubagent{ID: id, Started: e.GetStartTime().AsTime()}
		memo := e.GetMemo().GetFields()
		_ = dc.FromPayload(memo["label"], &s.Label)
		_ = dc.FromPayload(memo["origin"], &s.Origin)
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if v, err := t.Client.QueryWorkflow(qctx, e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId(), protocol.QueryState); err == nil {
			var st protocol.TurnState
			if v.Get(&st) == nil {
				s.State, s.Iteration = st.State, st.Iteration
			}
		}
		cancel()
		out = append(out, s)
	}
	return out, nil
}

// listSubagents answers GET /api/subagents.
func (c *Channel) listSubagents(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	s, _ := c.turns.(Subagents)
	c.mu.Unlock()
	if s == nil {
		writeError(w, http.StatusServiceUnavailable, "this gateway does not reach Temporal")
		return
	}
	list, err := s.Running(r.Context())
	if err != nil {
		c.log.Error("listing the running subagents failed", "error", err)
		writeError(w, http.StatusBadGateway, "could not list the running subagents: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"subagents": list})
}
