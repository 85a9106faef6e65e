package web

import (
	"context"
	"encoding/json"
	"time"

	sdkpb "go.temporal.io/api/sdk/v1"
	workflowpb "go.temporal.io/api/workflow/v1"

	"github.com/nanobot-durable/nanobot/protocol"
)

// livePoll is how often an open page's turn is asked where it is; a change is pushed.
const livePoll = time.Second

// metadataQuery is Temporal's built-in query answering a workflow's current details.
const metadataQuery = "__temporal_workflow_metadata"

// retryView is a model or tool call Temporal is retrying: what, which attempt, and when the next.
type retryView struct {
	What    string `json:"what"` // "the model call", "the tool call"
	Attempt int32  `json:"attempt"`
	Max     int32  `json:"max,omitempty"` // 0: no limit
	// NextInMS is how long until the attempt starts (0: it runs now), as of the answer.
	NextInMS  int64  `json:"next_in_ms,omitempty"`
	LastError string `json:"last_error,omitempty"`
}

// activityNames say what a retried activity is, in the page's words.
var activityNames = map[string]string{protocol.ActivityLLMCall: "the model call", protocol.ActivityTool: "the tool call"}

// retryOf is the first pending call past its first attempt (nil: none is being retried).
func retryOf(pending []*workflowpb.PendingActivityInfo, now time.Time) *retryView {
	for _, a := range pending {
		if a.GetAttempt() < 2 {
			continue
		}
		what := activityNames[a.GetActivityType().GetName()]
		if what == "" {
			what = "the step " + a.GetActivityType().GetName()
		}
		r := &retryView{What: what, Attempt: a.GetAttempt(), Max: a.GetMaximumAttempts(), LastError: a.GetLastFailure().GetMessage()}
		if next := a.GetNextAttemptScheduleTime(); next != nil && next.AsTime().After(now) {
			r.NextInMS = next.AsTime().Sub(now).Milliseconds()
		}
		return r
	}
	return nil
}

// currentDetails is what the turn last set with SetCurrentDetails ("" when it does not answer).
func (t TemporalTurns) currentDetails(ctx context.Context, id, runID string) string {
	v, err := t.Client.QueryWorkflow(ctx, id, runID, metadataQuery)
	if err != nil {
		return ""
	}
	var meta sdkpb.WorkflowMetadata
	if v.Get(&meta) != nil {
		return ""
	}
	return meta.GetCurrentDetails()
}

// watchTurn asks where a session's turn is every livePoll until ctx ends,
// and hands over each change; a slow answer from Temporal never holds up
// the stream's other events, and a change not yet sent gives way to a newer one.
func (c *Channel) watchTurn(ctx context.Context, key string, pushed *livePusher) <-chan TurnNow {
	out := make(chan TurnNow, 1)
	go func() {
		poll := time.NewTicker(livePoll)
		defer poll.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-poll.C:
			}
			if now := c.turnNow(ctx, key); pushed.changed(now) {
				select {
				case <-out: // the page has not taken the last one: it is stale
				default:
				}
				out <- now
			}
		}
	}()
	return out
}

// livePusher sends a page's turn again whenever where it is changes.
type livePusher struct {
	last []byte
}

// changed reports whether now differs from what was last sent, remembering it.
// A retry's countdown alone is not a change: the page counts down itself.
func (p *livePusher) changed(now TurnNow) bool {
	if now.Retry != nil {
		r := *now.Retry
		r.NextInMS = min(r.NextInMS, 1) // waiting or running, not how long
		now.Retry = &r
	}
	b, _ := json.Marshal(now)
	if string(b) == string(p.last) {
		return false
	}
	p.last = b
	return true
}
