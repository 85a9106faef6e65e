package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/prompt"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/tools"
	"github.com/nanobot-durable/nanobot/visibility"
)

// announceResultChars bounds the result a subagent announces into its
// origin session (it travels in a signal, so in the origin's history).
const announceResultChars = 8000

// Subagents are spawn's side: the checks before a subagent starts, its
// first message, and its announcement into the origin session.
type Subagents struct {
	journal
	tools     *Toolbox // the subagent's tools, journaled when they run on the workspace host
	client    client.Client
	config    func() *config.Config // maxConcurrentSubagents
	workspace string
	log       *slog.Logger
}

// spawnArgs reads a spawn call's arguments from the journal.
func (a *Subagents) spawnArgs(ctx context.Context, ref protocol.SpawnRef) (task, label string, wait bool, err error) {
	sess, err := a.load(ctx, ref.SessionKey)
	if err != nil {
		return "", "", false, err
	}
	call, ok := findCall(sess, protocol.ToolCallInput{Turn: ref.Turn, CallID: ref.CallID, LLMEntry: ref.LLMEntry})
	if !ok {
		return "", "", false, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("spawn call %s is not in the journal of turn %s", ref.CallID, ref.Turn), ErrJournal, nil)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(call.Function.Arguments), &args); err != nil {
		return "", "", false, nil // reported to the model as a bad argument
	}
	task = strings.TrimSpace(tools.StringArg(args, "task"))
	label = strings.TrimSpace(tools.StringArg(args, "label"))
	if label == "" {
		label = chat.Cut(strings.Join(strings.Fields(task), " "), 30)
	}
	wait, _ = args["wait"].(bool)
	return task, label, wait, nil
}

// PrepareSpawn checks a spawn call before its subagent starts: the turn's
// policy, a task, and room under maxConcurrentSubagents for the origin session.
func (a *Subagents) PrepareSpawn(ctx context.Context, ref protocol.SpawnRef) (protocol.PrepareSpawnResult, error) {
	task, label, wait, err := a.spawnArgs(ctx, ref)
	if err != nil {
		return protocol.PrepareSpawnResult{}, err
	}
	res := protocol.PrepareSpawnResult{Label: label, Wait: wait}
	if err := tools.NewPolicy(ref.Profile, a.workspace).Permit("spawn", nil); err != nil {
		res.Refused = err.Error() // spawn runs in the workflow, so the policy is asked here
		return res, nil
	}
	if task == "" {
		res.Refused = "Error: Invalid parameters for tool 'spawn': task is required"
		return res, nil
	}
	if a.client == nil {
		res.Refused = "Error: subagents are not available in this context"
		return res, nil
	}
	limit := max(currentConfig(a.config).Agents.Defaults.MaxConcurrentSubagents, 1)
	running, err := visibility.RunningSubagents(ctx, a.client, instanceOf(ctx).TurnWorkflowID(ref.SessionKey), ref.SessionKey)
	if err != nil {
		// Temporal could not say; the model hears why, the turn goes on.
		a.log.Warn("counting running subagents failed; spawn refused", "session", ref.SessionKey, "error", err)
		res.Refused = "Error: cannot start a subagent now: counting this conversation's running subagents failed (" +
			chat.Preview(err.Error(), 300) + "). Do this task yourself, or try again later."
		return res, nil
	}
	res.SearchAttributes = visibility.HasSearchAttributes(ctx, a.client.OperatorService(), activity.GetInfo(ctx).WorkflowNamespace)
	if len(running) >= limit {
		res.Refused = fmt.Sprintf("Error: %d subagent(s) already running for this conversation (maxConcurrentSubagents is %d); "+
			"wait for one to report back, or do this task yourself.", len(running), limit)
	}
	return res, nil
}

// SubagentBuild starts a subagent's conversation: its system prompt and,
// as the user message, the task from the spawn call in the parent's journal.
func (a *Subagents) SubagentBuild(ctx context.Context, in protocol.SubagentInput) error {
	task, _, _, err := a.spawnArgs(ctx, in.Spawn)
	if err != nil {
		return err
	}
	key, turn := protocol.SubagentSessionKey(in.ID), "subagent-"+in.ID
	sess, err := a.load(ctx, key)
	if err != nil {
		return err
	}
	if err := a.journal.markSessionKind(ctx, sess, protocol.SubagentTurn); err != nil {
		return err
	}
	if err := a.store.AddTurnData(ctx, key, turn, "system", []byte(prompt.SubagentPrompt(a.workspace, in.Label))); err != nil {
		return fmt.Errorf("save subagent prompt: %w", err)
	}
	if err := a.tools.journalOffer(ctx, a.journal, in.Settings, key, turn, protocol.SubagentTurn); err != nil {
		return err
	}
	user := chat.Message{Role: chat.RoleUser, Content: task, Turn: turn, EntryID: "user"}
	if _, err := a.store.Append(ctx, key, user); err != nil {
		return fmt.Errorf("journal subagent task: %w", err)
	}
	return nil
}

// Announce tells the origin session what a subagent did: a message that
// starts a turn there, or joins the running one.
func (a *Subagents) Announce(ctx context.Context, in protocol.AnnounceInput) error {
	if a.client == nil {
		return temporal.NewNonRetryableApplicationError("no Temporal client to announce with", protocol.ErrConfig, nil)
	}
	sub := in.Subagent
	key := protocol.SubagentSessionKey(sub.ID)
	sess, err := a.load(ctx, key)
	if err != nil {
		return err
	}
	task, _, _, err := a.spawnArgs(ctx, sub.Spawn)
	if err != nil {
		return err
	}
	result := in.Text
	if in.FinalEntry != "" {
		if i := sess.Find(in.Turn, in.FinalEntry); i >= 0 {
			result = sess.Messages[i].Content
		}
	}
	content := AnnounceText(sub, task, result, in.StopReason, sess, in.Turn)
	bus := &channels.Bus{Client: a.client, Settings: sub.Settings, Instance: instanceOf(ctx)}
	msg := protocol.Inbound{
		ID: "subagent-" + sub.ID, SessionKey: sub.OriginKey, Route: sub.Origin, Content: content,
		SentAt: time.Now(),
	}
	if _, err := bus.Publish(ctx, msg); err != nil {
		return fmt.Errorf("announce subagent %s into %s: %w", sub.ID, sub.OriginKey, err)
	}
	return nil
}

// AnnounceText is the message a subagent's result arrives as: its task, its
// answer, or, when it failed, the steps it completed and what stopped it.
func AnnounceText(sub protocol.SubagentInput, task, result, stopReason string, sess *session.Session, turn string) string {
	status := "completed"
	failed := stopReason == protocol.StopError || stopReason == protocol.StopMaxIterations || stopReason == protocol.StopFailed
	if failed {
		status = "failed"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[Subagent '%s' %s] (id: %s)\n\nTask: %s\n\n", sub.Label, status, sub.ID, chat.Cut(task, 500))
	if !failed {
		fmt.Fprintf(&b, "Result:\n%s\n\n", chat.Cut(result, announceResultChars))
	} else {
		b.WriteString("Completed steps:\n")
		steps := 0
		for _, m := range sess.Messages {
			if m.Turn != turn || m.Role != chat.RoleTool {
				continue
			}
			steps++
			ok := "ok"
			if strings.HasPrefix(m.Content, "Error") {
				ok = "error"
			}
			fmt.Fprintf(&b, "- %s (%s)\n", m.Name, ok)
		}
		if steps == 0 {
			b.WriteString("- none\n")
		}
		fmt.Fprintf(&b, "Failure: %s\n\n", chat.Cut(result, 2000))
	}
	b.WriteString("Summarize this naturally for the user. Keep it brief. Do not mention technical details like \"subagent\" or task IDs.")
	return b.String()
}
