package channels

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/media"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/visibility"
)

// Bus hands inbound messages to the session's turn workflow: a message
// either starts a turn or joins the running one (an eager start falling
// back to a signal, or SignalWithStart), which serializes each session and
// runs sessions in parallel without locks.
type Bus struct {
	Client   client.Client
	Settings protocol.Settings
	// Instance names the turns' workflow IDs and task queue (gateway.instance).
	Instance protocol.Instance
	// LocalWorker: this process runs a worker on the turn queue with
	// Client, so a new turn can start eagerly on it (see startOrSignal).
	LocalWorker bool
	// Media shares a message's files with the hosts that read them (nil: none to share with).
	Media media.Store

	mu sync.RWMutex // guards Settings and LocalWorker once the bus is in use
}

// SetLocalWorker says this process now runs a worker on the turn queue.
func (b *Bus) SetLocalWorker(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.LocalWorker = on
}

func (b *Bus) eager() bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.LocalWorker && EagerTurns()
}

// SetSettings changes the settings new turns start with (a reloaded config).
func (b *Bus) SetSettings(s protocol.Settings) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.Settings = s
}

func (b *Bus) settings() protocol.Settings {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.Settings
}

// ErrNoSession refuses a message without a session key: Manager.Admit
// names a channel's, the CLI its own, a cron job or an announcement theirs.
var ErrNoSession = errors.New("message without a session key")

// Publish delivers one inbound message, its route stamped with whether
// anyone can take its reply (every inbound route enters Temporal here). A
// /stop for a running turn cancels it here and returns the reply to show;
// otherwise the reply is "".
func (b *Bus) Publish(ctx context.Context, msg protocol.Inbound) (string, error) {
	if msg.SessionKey == "" {
		return "", fmt.Errorf("publish %s from %s: %w", msg.ID, msg.Route, ErrNoSession)
	}
	StampReach(&msg.Route)
	if isStop(msg.Content) {
		stopped, err := b.Stop(ctx, msg.SessionKey)
		if err != nil {
			return "", err
		}
		if stopped > 0 {
			return fmt.Sprintf("Stopped %d task(s).", stopped), nil
		}
	}
	if err := media.ShareAll(ctx, b.Media, msg.Media); err != nil {
		// The text still goes through: a turn without a file beats a lost message.
		slog.Error("a message's files cannot be shared with the other hosts; the turn may not see them",
			"message_id", msg.ID, "session", msg.SessionKey, "error", err)
	}
	opts := client.StartWorkflowOptions{
		ID:                       b.Instance.TurnWorkflowID(msg.SessionKey),
		TaskQueue:                b.Instance.TaskQueue(),
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		StaticSummary:            msg.Route.Channel + ": " + firstLine(msg.Content, 80),
	}
	opts.TypedSearchAttributes = temporal.NewSearchAttributes(
		SessionKeyAttribute.ValueSet(msg.SessionKey), ChannelAttribute.ValueSet(msg.Route.Channel))
	deliver := b.signalWithStart
	if b.eager() {
		deliver = b.startOrSignal
	}
	err := deliver(ctx, opts, msg)
	var invalid *serviceerror.InvalidArgument
	if errors.As(err, &invalid) && strings.Contains(strings.ToLower(invalid.Error()), "search attribute") {
		// A cluster without our search attributes still runs turns, just less findable.
		slog.Warn("Temporal lacks nanobot's search attributes (run nanobot setup-temporal); starting the turn without them",
			"attributes", "NanobotSessionKey, NanobotChannel (Keyword)", "error", err)
		opts.TypedSearchAttributes = temporal.SearchAttributes{}
		err = deliver(ctx, opts, msg)
	}
	if err != nil {
		return "", fmt.Errorf("deliver message to %s: %w", opts.ID, err)
	}
	return "", nil
}

// signalWithStart joins the running turn or starts one, in one call.
func (b *Bus) signalWithStart(ctx context.Context, opts client.StartWorkflowOptions, msg protocol.Inbound) error {
	in := protocol.TurnInput{SessionKey: msg.SessionKey, Settings: b.settings()}
	_, err := b.Client.SignalWithStartWorkflow(ctx, opts.ID, protocol.SignalInbound, msg, opts, protocol.TurnWorkflowName, in)
	return err
}

// Search attributes of a turn, so the UI can list a session's or a channel's turns.
var (
	SessionKeyAttribute = protocol.SessionKeyAttribute
	ChannelAttribute    = protocol.ChannelAttribute
)

// Stop cancels the session's running turn and its subagents; it returns
// how many it stopped.
func (b *Bus) Stop(ctx context.Context, sessionKey string) (int, error) {
	stopped := 0
	id := b.Instance.TurnWorkflowID(sessionKey)
	desc, err := b.Client.DescribeWorkflowExecution(ctx, id, "")
	var notFound *serviceerror.NotFound
	switch {
	case errors.As(err, &notFound):
	case err != nil:
		return 0, fmt.Errorf("describe %s: %w", id, err)
	case desc.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		if err := b.Client.CancelWorkflow(ctx, id, ""); err != nil {
			return 0, fmt.Errorf("cancel %s: %w", id, err)
		}
		stopped++
	}
	subs, err := visibility.RunningSubagents(ctx, b.Client, id, sessionKey)
	if err != nil {
		return stopped, err
	}
	for _, sub := range subs {
		if err := b.Client.CancelWorkflow(ctx, sub, ""); err != nil && !errors.As(err, &notFound) {
			return stopped, fmt.Errorf("cancel %s: %w", sub, err)
		}
		stopped++
	}
	return stopped, nil
}

func isStop(text string) bool { return isCommand(text, "/stop") }

// isCommand reports whether text is the slash command name.
func isCommand(text, name string) bool {
	got, _, ok := protocol.ParseCommand(text)
	return ok && got == name
}

// RestartingReply is nanobot's answer to /restart; RestartedReply (with
// the seconds it took) is said in the same chat once the gateway is back.
const (
	RestartingReply = "Restarting..."
	RestartedReply  = "Restart completed in %.1fs."
)

func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return chat.Preview(s, n)
}
