package visibility

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/nanobot-durable/nanobot/protocol"
)

// fakeVisibility answers queries as a server would: known answers by the
// attribute they use, or refuses an attribute it does not know.
type fakeVisibility struct {
	unknown string // an attribute this server does not have
	queries []string
}

func (f *fakeVisibility) ListWorkflow(_ context.Context, req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	f.queries = append(f.queries, req.Query)
	if f.unknown != "" && strings.Contains(req.Query, f.unknown) {
		return nil, errors.New("invalid query: invalid search attribute: " + f.unknown)
	}
	exec := &workflowpb.WorkflowExecutionInfo{Execution: &commonpb.WorkflowExecution{WorkflowId: "subagent/1"}}
	return &workflowservice.ListWorkflowExecutionsResponse{Executions: []*workflowpb.WorkflowExecutionInfo{exec}}, nil
}

func TestRunningSubagentsNeedNoCustomSearchAttribute(t *testing.T) {
	f := &fakeVisibility{unknown: "NanobotSessionKey"}
	ids, err := RunningSubagents(context.Background(), f, protocol.TurnWorkflowID("telegram:4'2"), "telegram:4'2")
	require.NoError(t, err)
	require.Equal(t, []string{"subagent/1"}, ids)
	require.Equal(t, []string{`WorkflowType = 'SubagentWorkflow' AND ExecutionStatus = 'Running' AND ParentWorkflowId = 'turn/telegram:4\'2'`}, f.queries,
		"one query, by the built-in ParentWorkflowId")

	old := &fakeVisibility{unknown: "ParentWorkflowId"} // a server too old for it
	ids, err = RunningSubagents(context.Background(), old, protocol.TurnWorkflowID("cli:x"), "cli:x")
	require.NoError(t, err)
	require.Equal(t, []string{"subagent/1"}, ids)
	require.Len(t, old.queries, 2)
	require.Contains(t, old.queries[1], "NanobotSessionKey = 'cli:x'")

	neither := &fakeVisibility{unknown: "Workflow"}
	_, err = RunningSubagents(context.Background(), neither, protocol.TurnWorkflowID("cli:x"), "cli:x")
	require.ErrorContains(t, err, "list the running subagents of cli:x")
}
