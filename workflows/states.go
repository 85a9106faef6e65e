package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/nanobot-durable/nanobot/protocol"
)

func (t *turn) restore(ctx workflow.Context) (Event, error) {
	var res protocol.RestoreResult
	err := workflow.ExecuteLocalActivity(localCtx(ctx, "restore"), protocol.ActivityRestore, t.step()).Get(ctx, &res)
	if res.Model != "" { // the session switched models with /model
		t.in.Settings.Model = res.Model
		if res.MaxTokens > 0 {
			t.in.Settings.MaxTokens = res.MaxTokens
		}
		if res.ContextWindowTokens > 0 {
			t.in.Settings.ContextWindowTokens = res.ContextWindowTokens
		}
	}
	t.noteRestore(res)
	return EvOK, err
}

func (t *turn) compact(ctx workflow.Context) (Event, error) {
	var res protocol.CompactResult
	err := workflow.ExecuteLocalActivity(localCtx(ctx, "compact"), protocol.ActivityCompact, t.step()).Get(ctx, &res)
	if err == nil {
		t.consolidateBeforeTurn(ctx)
	}
	return EvOK, err
}

func (t *turn) command(ctx workflow.Context) (Event, error) {
	t.consolidateBeforeNew(ctx)
	var res protocol.CommandResult
	// A slash command may read the workspace (/skill): it runs where the workspace is.
	var run workflow.Future
	if strings.HasPrefix(strings.TrimSpace(t.msg.Content), "/") {
		run = onWorkspace(ctx, t.in.Settings, "command", protocol.ActivityCommand, t.step())
	} else {
		run = workflow.ExecuteLocalActivity(localCtx(ctx, "command"), protocol.ActivityCommand, t.step())
	}
	if err := run.Get(ctx, &res); err != nil {
		return "", err
	}
	if !res.Handled {
		t.busy, t.profile = true, protocol.ProfileFor(t.msg.Kind, res.Goal)
		return EvDispatch, nil
	}
	t.run.final = reply{Text: res.Reply, EntryID: res.EntryID, StopReason: protocol.StopCommand}
	t.deliver(ctx)
	return EvShortcut, nil
}

func (t *turn) build(ctx workflow.Context) (Event, error) {
	if protocol.HasAudio(t.msg.Media) { // only a message with audio adds commands: runs without replay as before
		if err := t.transcribe(ctx); err != nil {
			return "", err
		}
	}
	var res protocol.BuildResult
	return EvOK, buildStep(ctx, t.in.Settings, t.step(), &res)
}

// buildHereFirst marks runs whose BUILD, when the workspace has a queue of its own, is tried
// first as a local activity on the turn's worker: the workspace host's own turns skip the
// queue's round trip; older runs always send it to the workspace queue.
const buildHereFirst = "build-here-first"

// buildStep runs BUILD where the workspace is: in place on its host, else on its queue.
func buildStep(ctx workflow.Context, s protocol.Settings, in protocol.StepInput, res *protocol.BuildResult) error {
	if s.WorkspaceQueue != "" && workflow.GetVersion(ctx, buildHereFirst, workflow.DefaultVersion, 1) == 1 {
		err := workflow.ExecuteLocalActivity(localCtx(ctx, "build"), protocol.ActivityBuildHere, in).Get(ctx, res)
		if !isAppError(err, protocol.ErrNotHere) {
			return err
		}
	}
	return onWorkspace(ctx, s, "build", protocol.ActivityBuild, in).Get(ctx, res)
}

// transcribe turns the message's voice notes into text (journaled for BUILD)
// and tells the user, in nanobot's words, about a note that could not be read.
func (t *turn) transcribe(ctx workflow.Context) error {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           instanceOf(ctx).LLMTaskQueue(),
		StartToCloseTimeout: 3 * time.Minute,
		HeartbeatTimeout:    t.in.Settings.LLMHeartbeat,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			MaximumAttempts: protocol.TranscribeAttempts,
		},
		Summary: "transcribe voice note",
	})
	var res protocol.TranscribeResult
	if err := workflow.ExecuteActivity(actx, protocol.ActivityTranscribe, t.step()).Get(ctx, &res); err != nil {
		return err
	}
	if len(res.Hints) == 0 || !t.msg.Route.Deliverable() {
		return nil
	}
	t.deliverTo(ctx, []protocol.DeliverInput{{
		SessionKey: t.in.SessionKey, Turn: t.id + "/voice", Route: t.msg.Route, MessageIDs: []string{t.msg.ID},
		Text: strings.Join(res.Hints, "\n"), Kind: protocol.ReplyMessage,
	}})
	return nil
}

func (t *turn) save(ctx workflow.Context) (Event, error) {
	in := protocol.SaveInput{
		StepInput: t.step(), StopReason: t.run.final.StopReason, FinalEntry: t.run.final.EntryID,
		LatencyMS: workflow.Now(ctx).Sub(t.started).Milliseconds(),
		Segments:  t.run.Segments, PromptTokens: t.run.PromptTokens, CompletionTokens: t.run.CompletionTokens,
	}
	if t.run.final.EntryID == "" {
		in.Reply = t.run.final.Text
	}
	if len(t.run.Segments) > 1 {
		t.run.final.EntryID = "final" // SAVE joins the continued reply into one message
	}
	// Errors are shown to the user but only a placeholder enters history.
	err := workflow.ExecuteLocalActivity(localCtx(ctx, "save"), protocol.ActivitySave, in).Get(ctx, nil)
	return EvOK, err
}

func (t *turn) respond(ctx workflow.Context) (Event, error) {
	t.deliver(ctx)
	t.consolidateAfterSave(ctx)
	return EvOK, nil
}

// inlineCommands answer while a turn runs, as nanobot's do.
var inlineCommands = map[string]bool{"/status": true, "/help": true, "/history": true,
	protocol.ApproveCommand: true, protocol.DenyCommand: true}

func isInlineCommand(text string) bool {
	name, _, ok := protocol.ParseCommand(text)
	return ok && inlineCommands[name]
}

// inlineCommand answers a read-only command that arrived during the turn.
func (t *turn) inlineCommand(ctx workflow.Context, msg protocol.Inbound) {
	step := protocol.StepInput{
		SessionKey: t.in.SessionKey, Turn: t.id + "/" + msg.ID, Message: msg, Settings: t.in.Settings,
		Running: fmt.Sprintf("%s, iteration %d of %d", t.m.current, t.run.Iteration, t.in.Settings.MaxIterations),
	}
	if w := t.run.waitingFor; w != nil {
		step.Running += ", " + w.WaitingLine(workflow.Now(ctx).Sub(w.AskedAt))
	}
	var res protocol.CommandResult
	if err := workflow.ExecuteLocalActivity(localCtx(ctx, "inline command"), protocol.ActivityCommand, step).Get(ctx, &res); err != nil {
		workflow.GetLogger(ctx).Error("inline command failed", "session", t.in.SessionKey, "error", err)
		return
	}
	if !msg.Route.Deliverable() {
		return // nobody waits for this reply
	}
	if res.ApprovalAnswered && msg.Route.PerProcess() {
		t.answered = append(t.answered, msg) // an API request or a CLI waits for the turn's reply, not for "Approved"
		return
	}
	in := protocol.DeliverInput{
		SessionKey: t.in.SessionKey, Turn: step.Turn, Route: msg.Route,
		MessageIDs: []string{msg.ID}, Text: res.Reply, EntryID: res.EntryID, StopReason: protocol.StopCommand,
	}
	t.deliverTo(ctx, []protocol.DeliverInput{in})
}

func localCtx(ctx workflow.Context, summary string) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 200 * time.Millisecond, MaximumAttempts: 5},
		Summary:             summary,
	})
}
