package workflows

import (
	"errors"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
)

// FailureReason is the part of a failure a person can read: the innermost
// application error's message rather than the SDK's wrapping.
func FailureReason(err error) string {
	reason := err.Error()
	var appErr *temporal.ApplicationError
	var te *temporal.TimeoutError
	switch {
	case errors.As(err, &appErr) && strings.TrimSpace(appErr.Message()) != "":
		reason = appErr.Message()
	case errors.As(err, &te):
		reason = "a step timed out (" + te.TimeoutType().String() + ")"
	}
	return chat.Preview(strings.TrimSpace(reason), 300)
}

// failed ends a turn that cannot go on (a bug, a step that failed for
// good): the failure goes into the journal and, in one short reply, to
// every chat the turn answers, so no chat is left in silence. The run then
// fails as it did, unless messages wait: they start the next turn.
func (t *turn) failed(ctx workflow.Context, cause error) error {
	log := workflow.GetLogger(ctx)
	log.Error("the turn failed; telling its chat", "session", t.in.SessionKey, "error", cause)
	text := protocol.FailedTurnText(FailureReason(cause))
	in := protocol.SaveInput{StepInput: t.step(), StopReason: protocol.StopFailed, Reply: text,
		LatencyMS: workflow.Now(ctx).Sub(t.started).Milliseconds()}
	if err := workflow.ExecuteLocalActivity(localCtx(ctx, "save the failure"), protocol.ActivitySave, in).Get(ctx, nil); err != nil {
		log.Error("journaling the turn's failure failed", "session", t.in.SessionKey, "error", err)
	}
	t.run.final = reply{Text: text, StopReason: protocol.StopFailed}
	t.deliver(ctx)
	if err := t.close(ctx); err != nil {
		return err
	}
	return cause
}
