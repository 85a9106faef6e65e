package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/nanobot-durable/nanobot/protocol"
)

// PendingApproval is a request a running turn waits on, in any chat.
type PendingApproval struct {
	Session string `json:"session"`
	// Answerable: a web chat's request, answered here as its chat's button does
	// (POST /api/send); another channel's is answered in its chat or by the owner's CLI.
	Answerable bool          `json:"answerable"`
	Request    *approvalView `json:"request"`
}

// Approvals lists what running turns wait on (TemporalTurns does).
type Approvals interface {
	Pending(ctx context.Context) ([]PendingApproval, error)
}

// maxRunningTurns bounds the running turns asked in one listing.
const maxRunningTurns = 200

// Pending implements Approvals: the instance's running turns, each asked where it is.
func (t TemporalTurns) Pending(ctx context.Context) ([]PendingApproval, error) {
	resp, err := t.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		PageSize: maxRunningTurns,
		Query:    "WorkflowType = '" + protocol.TurnWorkflowName + "' AND ExecutionStatus = 'Running'",
	})
	if err != nil {
		return nil, fmt.Errorf("list the running turns: %w", err)
	}
	prefix := t.Instance.TurnWorkflowID("")
	out := []PendingApproval{}
	for _, e := range resp.GetExecutions() {
		key, ours := strings.CutPrefix(e.GetExecution().GetWorkflowId(), prefix)
		if !ours || key == "" {
			continue
		}
		now, err := t.Now(ctx, key)
		if err != nil || now.Waiting == nil {
			continue // ended meanwhile, or not answering: nothing to answer
		}
		out = append(out, PendingApproval{Session: key, Answerable: strings.HasPrefix(key, Name+":"), Request: now.Waiting})
	}
	return out, nil
}

// listApprovals answers GET /api/approvals.
func (c *Channel) listApprovals(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	a, _ := c.turns.(Approvals)
	c.mu.Unlock()
	if a == nil {
		writeError(w, http.StatusServiceUnavailable, "this gateway does not reach Temporal")
		return
	}
	list, err := a.Pending(r.Context())
	if err != nil {
		c.log.Error("listing the waiting approvals failed", "error", err)
		writeError(w, http.StatusBadGateway, "could not list the waiting approvals: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": list})
}
