// Package visibility holds what nanobot asks Temporal's visibility store:
// whether a namespace has nanobot's search attributes, and which subagents
// of a session run. Both work on a cluster where `nanobot setup-temporal`
// never ran.
package visibility

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/nanobot-durable/nanobot/protocol"
)

// SearchAttributes are nanobot's custom search attributes, with their types.
var SearchAttributes = map[string]enumspb.IndexedValueType{
	protocol.SessionKeyAttribute.GetName(): enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	protocol.ChannelAttribute.GetName():    enumspb.INDEXED_VALUE_TYPE_KEYWORD,
}

// recheckAfter is how long a namespace without the attributes is believed
// to stay so: `nanobot setup-temporal` may add them meanwhile.
const recheckAfter = time.Minute

type answer struct {
	has bool
	at  time.Time
}

var (
	mu     sync.Mutex
	cached = map[string]answer{}
)

// HasSearchAttributes reports whether the namespace has every one of
// nanobot's search attributes. A workflow that sets an attribute the
// namespace lacks cannot start (a child's start fails its parent's workflow
// task), so a failure to ask counts as "no".
func HasSearchAttributes(ctx context.Context, op operatorservice.OperatorServiceClient, namespace string) bool {
	mu.Lock()
	a, ok := cached[namespace]
	mu.Unlock()
	if ok && (a.has || time.Since(a.at) < recheckAfter) {
		return a.has
	}
	has := false
	resp, err := op.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err == nil {
		has = true
		for name, typ := range SearchAttributes {
			if resp.GetCustomAttributes()[name] != typ {
				has = false
			}
		}
	}
	mu.Lock()
	cached[namespace] = answer{has: has, at: time.Now()}
	mu.Unlock()
	return has
}

// WorkflowLister lists workflows by a visibility query.
type WorkflowLister interface {
	ListWorkflow(ctx context.Context, req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error)
}

// RunningSubagents lists the workflow IDs of a session's running subagents
// (turnID: the session's turn workflow, their parent).
// A subagent is a child of its session's turn workflow, so the built-in
// ParentWorkflowId finds it without custom search attributes; a server too
// old to know ParentWorkflowId is asked by NanobotSessionKey instead.
func RunningSubagents(ctx context.Context, c WorkflowLister, turnID, sessionKey string) ([]string, error) {
	base := fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running'", protocol.SubagentWorkflowName)
	byParent := fmt.Sprintf("%s AND ParentWorkflowId = '%s'", base, quote(turnID))
	ids, err := list(ctx, c, byParent)
	if err == nil {
		return ids, nil
	}
	if strings.Contains(strings.ToLower(err.Error()), "parentworkflowid") {
		bySession := fmt.Sprintf("%s AND %s = '%s'", base, protocol.SessionKeyAttribute.GetName(), quote(sessionKey))
		if ids, err2 := list(ctx, c, bySession); err2 == nil {
			return ids, nil
		}
	}
	return nil, fmt.Errorf("list the running subagents of %s: %w", sessionKey, err)
}

func list(ctx context.Context, c WorkflowLister, query string) ([]string, error) {
	var ids []string
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
		if err != nil {
			return nil, err
		}
		for _, e := range resp.GetExecutions() {
			ids = append(ids, e.GetExecution().GetWorkflowId())
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return ids, nil
		}
	}
}

// quote escapes a value for a single-quoted visibility query string.
func quote(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) }
