package channels

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/protocol"
)

// EagerTurnsEnv switches eager turn starts off ("0", "false") to compare
// them with SignalWithStart; read once per process.
const EagerTurnsEnv = "NANOBOT_EAGER_TURNS"

var eagerTurns = sync.OnceValue(func() bool {
	v := os.Getenv(EagerTurnsEnv)
	if v == "" {
		return true
	}
	on, err := strconv.ParseBool(v)
	return err != nil || on
})

// EagerTurns reports whether a bus with a local worker starts turns eagerly.
func EagerTurns() bool { return eagerTurns() }

// maxStartRounds bounds start → signal → start rounds: each round needs a
// whole run to close between two of our calls, so a few are plenty.
const maxStartRounds = 8

// startOrSignal starts the session's turn with the message as its input,
// eagerly on this process's worker (SignalWithStart has no eager form);
// when a run exists it signals that run, and when the run closed in
// between (NotFound) it starts again. Either call delivers the message to
// exactly one run: a start creates the run holding it, a signal accepted
// by a running run is read by it or carried into its next run.
func (b *Bus) startOrSignal(ctx context.Context, opts client.StartWorkflowOptions, msg protocol.Inbound) error {
	opts.EnableEagerStart = true
	opts.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL
	opts.WorkflowExecutionErrorWhenAlreadyStarted = true
	in := protocol.TurnInput{SessionKey: msg.SessionKey, Settings: b.settings(), Carry: []protocol.Inbound{msg}}
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	var closed *serviceerror.NotFound
	for range maxStartRounds {
		_, err := b.Client.ExecuteWorkflow(ctx, opts, protocol.TurnWorkflowName, in)
		if !errors.As(err, &started) {
			return err
		}
		err = b.Client.SignalWorkflow(ctx, opts.ID, "", protocol.SignalInbound, msg)
		if !errors.As(err, &closed) {
			return err
		}
	}
	return fmt.Errorf("the turn closed between start and signal %d times in a row", maxStartRounds)
}
