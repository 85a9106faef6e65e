package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
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

// Subagents lists this instance's running subagents and tells how one is
// doing (TemporalTurns does).
type Subagents interface {
	Running(ctx context.Context) ([]RunningSubagent, error)
	Subagent(ctx context.Context, id string) (SubagentView, error)
}

// The states of a subagent on its spawn call's card.
const (
	subagentRunning   = "running"
	subagentDone      = "done"
	subagentFailed    = "failed"
	subagentCancelled = "cancelled"
	subagentUnknown   = "unknown" // never started (the call was refused) or no longer kept
)

// SubagentView is one subagent as its spawn call's card shows it.
type SubagentView struct {
	ID    string `json:"id"`
	Label string `json:"label,omitempty"`
	State string `json:"state"`
	// Step and Iteration are where its loop is while it runs.
	Step      string `json:"step,omitempty"`
	Iteration int    `json:"iteration,omitempty"`
	// Result is its answer once done, or why it failed.
	Result string `json:"result,omitempty"`
	// RunID is its latest run; Inspect its address in the Web UI ("" without one).
	RunID   string `json:"run_id,omitempty"`
	Inspect string `json:"inspect,omitempty"`
}

// subagentIDs are what protocol.SubagentID makes; nothing else is asked for.
var subagentIDs = regexp.MustCompile(`^[0-9a-f]{8}$`)

// Subagent implements Subagents: the subagent workflow's latest run, its
// state query while it runs, its result once it ended.
func (t TemporalTurns) Subagent(ctx context.Context, id string) (SubagentView, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v := SubagentView{ID: id, State: subagentUnknown}
	wid := t.Instance.Name(protocol.SubagentWorkflowID(id))
	desc, err := t.Client.DescribeWorkflowExecution(ctx, wid, "")
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return v, nil
	}
	if err != nil {
		return v, fmt.Errorf("describe %s: %w", wid, err)
	}
	info := desc.GetWorkflowExecutionInfo()
	v.RunID = info.GetExecution().GetRunId()
	_ = converter.GetDefaultDataConverter().FromPayload(info.GetMemo().GetFields()["label"], &v.Label)
	switch info.GetStatus() {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		v.State = subagentRunning
		v.Step, v.Iteration = t.loopState(ctx, wid, v.RunID)
		return v, nil
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED, enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		v.State = subagentCancelled
		return v, nil
	}
	var res protocol.SubagentResult
	if err := t.Client.GetWorkflow(ctx, wid, v.RunID).Get(ctx, &res); err != nil {
		v.State, v.Result = subagentFailed, err.Error()
		return v, nil
	}
	v.State, v.Result, v.Iteration = subagentDone, res.ResultPreview, res.Iterations
	if res.StopReason == protocol.StopError {
		v.State = subagentFailed
	}
	return v, nil
}

// showSubagent answers GET /api/subagent?id=<id>: how the subagent a spawn call started is doing.
func (c *Channel) showSubagent(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	if !subagentIDs.MatchString(id) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("id %q: want a subagent's id (8 hex digits)", id))
		return
	}
	s := c.subagents(w)
	if s == nil {
		return
	}
	v, err := s.Subagent(r.Context(), id)
	if err != nil {
		c.log.Warn("reading a subagent failed", "subagent", id, "error", err)
		writeError(w, http.StatusBadGateway, "could not read the subagent: "+err.Error())
		return
	}
	if base := c.inspectWorkflow(c.instance.Name(protocol.SubagentWorkflowID(id))); base != "" && v.RunID != "" {
		v.Inspect = base + v.RunID + "/history"
	}
	writeJSON(w, http.StatusOK, v)
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
		s.State, s.Iteration = t.loopState(ctx, e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId())
		out = append(out, s)
	}
	return out, nil
}

// listSubagents answers GET /api/subagents.
func (c *Channel) listSubagents(w http.ResponseWriter, r *http.Request) {
	s := c.subagents(w)
	if s == nil {
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

// subagents is what tells of the subagents; nil, answered 503, when this gateway does not reach Temporal.
func (c *Channel) subagents(w http.ResponseWriter) Subagents {
	c.mu.Lock()
	s, _ := c.turns.(Subagents)
	c.mu.Unlock()
	if s == nil {
		writeError(w, http.StatusServiceUnavailable, "this gateway does not reach Temporal")
	}
	return s
}

// loopState is where a subagent's loop is, from its state query (empty when it does not answer).
func (t TemporalTurns) loopState(ctx context.Context, workflowID, runID string) (string, int) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v, err := t.Client.QueryWorkflow(ctx, workflowID, runID, protocol.QueryState)
	if err != nil {
		return "", 0
	}
	var st protocol.TurnState
	if v.Get(&st) != nil {
		return "", 0
	}
	return st.State, st.Iteration
}
