package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/memory"
	"github.com/nanobot-durable/nanobot/memory/gitstore"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
)

// Dream's limits (nanobot's).
const (
	// dreamSessionPrefix names a Dream run's session (dream:<start time>).
	dreamSessionPrefix = "dream:"
	dreamBatch         = 20   // history entries per run
	dreamEntryChars    = 1000 // each entry, cut
	dreamFileChars     = 8000 // SOUL.md, USER.md, MEMORY.md, each cut
	keptDreamSessions  = 10
	// DreamCommitMessage is the commit each Dream run leaves.
	DreamCommitMessage = "dream: periodic memory consolidation"
	// DreamManualID is the workflow of a /dream (one at a time).
	DreamManualID = "dream-now"
	// Inbound metadata of a Dream turn: the entries it absorbs.
	dreamFromKey = "dream_from"
	dreamToKey   = "dream_to"
)

// DreamSystemPrompt is what a Dream run is told it is for.
var DreamSystemPrompt = `# nanobot 🐈 — Dream

You are nanobot's memory keeper. Nobody is chatting: you tidy your memory in the background.
The user message holds conversation summaries that were archived since your last run, and the
current memory files. Your tools: read_file; edit_file, apply_patch and write_file, which may only
change ` + strings.Join(protocol.DreamWritable, ", ") + `.

- Fold durable facts from the new entries into memory/MEMORY.md: keep its sections, merge
  duplicates, replace outdated facts instead of adding contradictions, leave out small talk.
- Change USER.md only with facts the user stated about themselves, and SOUL.md only when the user
  asked you to behave differently.
- Write a skill (skills/<name>/SKILL.md with name and description frontmatter) only for a concrete
  workflow that came up more than once.
- Make each edit once: an edit that succeeded is done. Do not repeat edits.
- When you are done, reply with one line saying what you changed, or "No changes."`

// Dream is memory's upkeep: a run picks archived entries, a turn in its
// own session folds them into the memory files, and the run commits them.
type Dream struct {
	journal
	workspace string
	archive   memory.Archive
	config    func() *config.Config // the Dream turn's settings, when it fires
	log       *slog.Logger
}

// PrepareDream picks the history entries a Dream run absorbs and names its
// session. It commits any hand edits first, so Dream's commit holds only Dream's.
func (a *Dream) PrepareDream(ctx context.Context, _ protocol.DreamInput) (protocol.DreamPlan, error) {
	from, entries, err := memory.Unprocessed(ctx, a.archive, dreamBatch)
	if err != nil {
		return protocol.DreamPlan{}, err
	}
	plan := protocol.DreamPlan{SessionKey: dreamSessionPrefix + time.Now().Format("20060102-150405"), From: from, To: from,
		Entries: len(entries), Settings: a.settings()}
	if len(entries) > 0 {
		plan.To = entries[len(entries)-1].Cursor
	}
	repo, err := gitstore.Open(a.workspace)
	if err != nil {
		return plan, err
	}
	if _, _, err := repo.Commit("memory: changes made outside Dream", time.Now()); err != nil {
		return plan, fmt.Errorf("commit memory before Dream: %w", err)
	}
	return plan, nil
}

// settings are the Dream turn's, from the current config: the model is
// dream.modelOverride when set.
func (a *Dream) settings() protocol.Settings {
	cfg := currentConfig(a.config)
	s := cfg.TurnSettings()
	if o := cfg.Agents.Defaults.Dream.ModelOverride; o != "" {
		s.Model = o
	}
	return s
}

// prompt is a Dream turn's user message: the entries and the files.
func (a *Dream) prompt(ctx context.Context, msg protocol.Inbound) (string, error) {
	from, _ := strconv.Atoi(msg.Metadata[dreamFromKey])
	to, _ := strconv.Atoi(msg.Metadata[dreamToKey])
	all, err := a.archive.Entries(ctx)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	var picked []memory.Entry
	for _, e := range all {
		if e.Cursor > from && e.Cursor <= to {
			picked = append(picked, e)
		}
	}
	fmt.Fprintf(&b, "## New history entries (%d)\n", len(picked))
	for _, e := range picked {
		fmt.Fprintf(&b, "\n- [%s] (%s) %s", e.Timestamp, e.SessionKey, chat.Preview(strings.TrimSpace(e.Content), dreamEntryChars))
	}
	for _, f := range []struct{ name, path string }{
		{"memory/MEMORY.md", memory.MemoryPath(a.workspace)},
		{"USER.md", a.workspace + "/USER.md"},
		{"SOUL.md", a.workspace + "/SOUL.md"},
	} {
		text, err := readIfExists(f.path)
		if err != nil {
			return "", err
		}
		if text == "" {
			text = "(empty)"
		}
		fmt.Fprintf(&b, "\n\n## %s\n\n%s", f.name, chat.Preview(text, dreamFileChars))
	}
	return b.String(), nil
}

// FinishDream moves the cursor when the run completed, commits the memory
// files and prunes old Dream sessions.
func (a *Dream) FinishDream(ctx context.Context, in protocol.FinishDreamInput) (protocol.DreamResult, error) {
	res := protocol.DreamResult{Entries: in.Plan.Entries}
	msg := DreamCommitMessage
	if in.Completed {
		moved, err := a.archive.AdvanceCursor(ctx, in.Plan.From, in.Plan.To)
		if err != nil {
			return res, err
		}
		if !moved {
			a.log.Warn("another Dream moved the cursor; this run's entries stay for the next", "from", in.Plan.From)
		}
	} else {
		msg += " (incomplete: the entries stay for the next run)"
	}
	repo, err := gitstore.Open(a.workspace)
	if err != nil {
		return res, err
	}
	if res.Commit, res.Changed, err = repo.Commit(msg, time.Now()); err != nil {
		return res, fmt.Errorf("commit memory after Dream: %w", err)
	}
	a.pruneDreamSessions(ctx)
	var shown []string // the cursor always moves: say what Dream itself changed
	for _, f := range res.Changed {
		if f != "memory/.dream_cursor" {
			shown = append(shown, f)
		}
	}
	switch {
	case !in.Completed:
		res.Text = "Dream stopped before it finished; nothing was marked processed."
	case len(shown) == 0:
		res.Text = fmt.Sprintf("Dream read %d history entries; memory unchanged.", res.Entries)
	default:
		res.Text = fmt.Sprintf("Dream read %d history entries and updated %s (commit %s).", res.Entries, strings.Join(shown, ", "), res.Commit[:7])
	}
	if reply := strings.TrimSpace(in.Reply); reply != "" && in.Completed {
		res.Text += "\n" + chat.Preview(reply, 500)
	}
	return res, nil
}

func (a *Dream) pruneDreamSessions(context.Context) {
	lister, ok := a.store.(session.Lister)
	if !ok {
		return
	}
	dreams, err := lister.SessionsOfKind(string(protocol.DreamTurn))
	if err != nil {
		a.log.Warn("listing Dream sessions failed", "error", err)
		return
	}
	sort.Slice(dreams, func(i, j int) bool { return dreams[i].Key > dreams[j].Key }) // names are timestamps
	for _, s := range dreams[min(keptDreamSessions, len(dreams)):] {
		if err := lister.Delete(s.Key); err != nil {
			a.log.Warn("removing an old Dream session failed", "session", s.Key, "error", err)
		}
	}
}

// cmdDream starts a Dream run now; its result comes back to this chat.
func (c *Commands) cmdDream(ctx context.Context, in protocol.StepInput, _ string) (string, error) {
	if c.client == nil {
		return "Dream is not available in this process.", nil
	}
	route := in.Message.Route
	opts := client.StartWorkflowOptions{
		ID: instanceOf(ctx).Name(DreamManualID), TaskQueue: instanceOf(ctx).TaskQueue(),
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		StaticSummary:            "dream (asked in " + route.String() + ")",
	}
	_, err := c.client.ExecuteWorkflow(ctx, opts, protocol.DreamWorkflowName, protocol.DreamInput{Route: &route})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return "A Dream is already running.", nil
	}
	if err != nil {
		return "", fmt.Errorf("start Dream: %w", err)
	}
	return "Dreaming...", nil
}

// cmdDreamLog lists Dream's commits, or shows one with its diff.
func (c *Commands) cmdDreamLog(_ context.Context, _ protocol.StepInput, args string) (string, error) {
	repo, err := gitstore.Open(c.workspace)
	if err != nil {
		return "", err
	}
	if args != "" {
		text, err := repo.Show(args)
		if err != nil {
			return err.Error(), nil
		}
		return chat.Preview(text, 3500), nil
	}
	log, err := repo.Log(10)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, e := range log {
		lines = append(lines, fmt.Sprintf("%s %s %s", e.Short(), e.When.Format("2006-01-02 15:04"), e.Message))
	}
	return listing("Memory commits (newest first; /dream-log <sha> shows one, /dream-restore <sha> goes back):",
		"No memory commits yet: Dream has not run.", lines), nil
}

// cmdDreamRestore brings the memory files back to an earlier commit.
func (c *Commands) cmdDreamRestore(_ context.Context, _ protocol.StepInput, args string) (string, error) {
	if args == "" {
		return "Usage: /dream-restore <sha> (see /dream-log)", nil
	}
	repo, err := gitstore.Open(c.workspace)
	if err != nil {
		return "", err
	}
	commit, changed, err := repo.Restore(args, time.Now())
	if err != nil {
		return err.Error(), nil
	}
	if commit == "" {
		return "Memory already matches " + args + ".", nil
	}
	return fmt.Sprintf("Restored %s to %s (commit %s).", strings.Join(changed, ", "), args, commit[:7]), nil
}

func readIfExists(path string) (string, error) {
	data, err := readFileOptional(path)
	return strings.TrimSpace(string(data)), err
}
