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

// dreamPromptHint ends nanobot's answers when there is nothing to show.
const dreamPromptHint = "Use `/dream-prompt` to see or change how Dream organizes memory."

// cmdDreamLog shows what the last Dream changed, or the commit asked for
// (nanobot's texts).
func (c *Commands) cmdDreamLog(_ context.Context, _ protocol.StepInput, args string) (string, error) {
	repo, err := gitstore.Open(c.workspace)
	if err != nil {
		return "", err
	}
	if sha, _, _ := strings.Cut(strings.TrimSpace(args), " "); sha != "" {
		ch, err := repo.Change(sha)
		if err != nil {
			return fmt.Sprintf("Couldn't find Dream change `%s`.\n\nUse `/dream-restore` to list recent versions, or `/dream-log` to inspect the latest one.", sha), nil
		}
		return dreamLogText(ch, true), nil
	}
	dreams, err := repo.Dreams(1)
	if err != nil {
		return "", err
	}
	if len(dreams) == 0 {
		if all, err := repo.Log(1); err == nil && len(all) == 0 {
			return "Dream has not run yet. Run `/dream`, or wait for the next scheduled Dream cycle.\n\n" + dreamPromptHint, nil
		}
		return "Dream memory has no saved versions yet.\n\n" + dreamPromptHint, nil
	}
	ch, err := repo.Change(dreams[0].Hash)
	if err != nil {
		return "", err
	}
	return dreamLogText(ch, false), nil
}

// dreamLogDiffChars bounds the diff a chat is shown.
const dreamLogDiffChars = 3000

func dreamLogText(ch gitstore.Change, asked bool) string {
	which := "Here is the latest Dream memory change."
	if asked {
		which = "Here is the selected Dream memory change."
	}
	lines := []string{"## Dream Update", "", which, "",
		"- Commit: `" + ch.Short() + "`", "- Time: " + ch.When.Format("2006-01-02 15:04"), "- Changed files: " + changedFiles(ch.Files)}
	if strings.TrimSpace(ch.Diff) == "" {
		lines = append(lines, "", "Dream recorded this version, but there is no file diff to display.")
	} else {
		lines = append(lines, "", "Use `/dream-restore "+ch.Short()+"` to undo this change.", "", "```diff",
			chat.Preview(strings.TrimRight(ch.Diff, "\n"), dreamLogDiffChars), "```")
	}
	return strings.Join(lines, "\n")
}

func changedFiles(files []string) string {
	if len(files) == 0 {
		return "No tracked memory files changed."
	}
	quoted := make([]string, len(files))
	for i, f := range files {
		quoted[i] = "`" + f + "`"
	}
	return strings.Join(quoted, ", ")
}

// cmdDreamRestore lists Dream's versions, or undoes one: the memory files
// go back to the state before that Dream commit, in a new commit
// (nanobot's texts).
func (c *Commands) cmdDreamRestore(_ context.Context, _ protocol.StepInput, args string) (string, error) {
	repo, err := gitstore.Open(c.workspace)
	if err != nil {
		return "", err
	}
	sha, _, _ := strings.Cut(strings.TrimSpace(args), " ")
	if sha == "" {
		dreams, err := repo.Dreams(10)
		if err != nil {
			return "", err
		}
		if len(dreams) == 0 {
			return "Dream memory has no saved versions to restore yet.", nil
		}
		lines := []string{"## Dream Restore", "", "Choose a Dream memory version to restore. Latest first:", ""}
		for _, e := range dreams {
			subject, _, _ := strings.Cut(e.Message, "\n")
			lines = append(lines, fmt.Sprintf("- `%s` %s - %s", e.Short(), e.When.Format("2006-01-02 15:04"), subject))
		}
		lines = append(lines, "", "Preview a version with `/dream-log <sha>` before restoring it.", "Restore a version with `/dream-restore <sha>`.")
		return strings.Join(lines, "\n"), nil
	}
	ch, err := repo.Change(sha)
	if err != nil || !strings.HasPrefix(ch.Message, gitstore.DreamPrefix) {
		return fmt.Sprintf("Couldn't restore Dream change `%s`.\n\nOnly Dream memory versions can be restored. Use `/dream-restore` to list recent versions.", sha), nil
	}
	if ch.Parent == "" {
		return fmt.Sprintf("Couldn't restore Dream change `%s`.\n\nIt may be the first saved version with no earlier state to restore.", sha), nil
	}
	commit, changed, err := repo.Restore(ch.Parent, time.Now())
	if err != nil {
		return "", err
	}
	if commit == "" {
		return fmt.Sprintf("Dream memory already matches the state before `%s`.", sha), nil
	}
	short := commit[:min(7, len(commit))]
	return fmt.Sprintf("Restored Dream memory to the state before `%s`.\n\n- New safety commit: `%s`\n- Restored files: %s\n\nUse `/dream-log %s` to inspect the restore diff.",
		sha, short, changedFiles(changed), short), nil
}

func readIfExists(path string) (string, error) {
	data, err := readFileOptional(path)
	return strings.TrimSpace(string(data)), err
}
