package activities

import (
	"context"
	"errors"
	"os"
	"sort"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
)

// IdleSessions lists sessions idle longer than idleCompactAfterMinutes
// (read now, from the current config) with more than 8 messages not yet
// archived. Sessions whose turn is running are reported as skipped;
// Dream's own sessions are never compacted.
func (a *Memory) IdleSessions(ctx context.Context, _ protocol.IdleCompactInput) (protocol.IdleSessions, error) {
	cfg := currentConfig(a.config)
	res := protocol.IdleSessions{Settings: cfg.TurnSettings()}
	idleAfter := time.Duration(cfg.Agents.Defaults.IdleCompactAfterMinutes) * time.Minute
	if idleAfter <= 0 {
		return res, nil // turned off since the schedule was made
	}
	lister, ok := a.store.(session.Lister)
	if !ok {
		return res, errors.New("idle compaction: the session store cannot list sessions")
	}
	all, err := lister.Sessions()
	if err != nil {
		return res, err
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Key < all[j].Key })
	now := time.Now()
	for _, info := range all {
		if now.Sub(info.Modified) < idleAfter {
			continue
		}
		sess, err := a.load(ctx, info.Key)
		if err != nil {
			a.log.Warn("idle compaction: unreadable session skipped", "session", info.Key, "error", err)
			continue
		}
		if !protocol.TurnKind(sess.Kind).RemembersIn() {
			continue // Dream's own, or a temporary chat (nothing of it goes to memory)
		}
		if len(sess.Unarchived()) <= protocol.IdleKeepMessages {
			continue
		}
		busy, err := a.turnRunning(ctx, info.Key)
		if err != nil {
			return res, err
		}
		if busy {
			res.Skipped = append(res.Skipped, info.Key)
			continue
		}
		res.Sessions = append(res.Sessions, info.Key)
	}
	return res, nil
}

// turnRunning asks Temporal whether the session's turn workflow is running.
func (a *Memory) turnRunning(ctx context.Context, key string) (bool, error) {
	if a.client == nil {
		return false, nil
	}
	desc, err := a.client.DescribeWorkflowExecution(ctx, instanceOf(ctx).TurnWorkflowID(key), "")
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return desc.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
}

func readFileOptional(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return data, err
}
