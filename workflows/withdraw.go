package workflows

import (
	"fmt"
	"slices"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
)

// A queued message can be taken back until the turn reads it: the
// validator refuses the rest (nothing is written to the history for a
// refusal), the handler drops it from what waits, so neither an injection
// nor the next turn (the carried messages) ever sees it.

// setWithdrawHandler registers protocol.UpdateWithdraw; it adds no command,
// so runs recorded before it replay unchanged.
func (t *turn) setWithdrawHandler(ctx workflow.Context) error {
	return workflow.SetUpdateHandlerWithOptions(ctx, protocol.UpdateWithdraw, func(ctx workflow.Context, id string) (protocol.Withdrawn, error) {
		return t.withdraw(ctx, id), nil
	}, workflow.UpdateHandlerOptions{Validator: t.canWithdraw})
}

// canWithdraw says why a message cannot be withdrawn (nil: it waits, untouched).
func (t *turn) canWithdraw(id string) error {
	switch {
	case slices.Contains(t.taking, id) || slices.ContainsFunc(t.answered, func(m protocol.Inbound) bool { return m.ID == id }):
		return temporal.NewApplicationError(fmt.Sprintf("message %s is already taken into the running turn: it will be answered", id), protocol.ErrWithdrawTaken)
	case !slices.ContainsFunc(t.pending, func(m protocol.Inbound) bool { return m.ID == id }):
		return temporal.NewApplicationError(fmt.Sprintf("no message %s waits in this turn (answered earlier, withdrawn, or not arrived)", id), protocol.ErrWithdrawUnknown)
	}
	return nil
}

// withdraw drops a waiting message the validator let through; the log and the
// update's own events in the history keep what was withdrawn.
func (t *turn) withdraw(ctx workflow.Context, id string) protocol.Withdrawn {
	i := slices.IndexFunc(t.pending, func(m protocol.Inbound) bool { return m.ID == id })
	if i < 0 {
		return protocol.Withdrawn{ID: id} // withdrawn twice in one task: already gone
	}
	m := t.pending[i]
	t.pending = slices.Delete(t.pending, i, i+1)
	workflow.GetLogger(ctx).Info("a queued message was withdrawn by its sender; it will not be answered",
		"session", t.in.SessionKey, "message", id, "route", m.Route.String())
	return protocol.Withdrawn{ID: id, Preview: chat.Preview(m.Content, queuedPreview)}
}
