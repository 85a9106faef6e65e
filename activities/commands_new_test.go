package activities

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/memory/gitstore"
	"github.com/nanobot-durable/nanobot/triggers"
)

func command(t *testing.T, a *rig, turn, text string) string {
	t.Helper()
	res, err := a.set().Commands.Command(context.Background(), step(turn, text))
	require.NoError(t, err)
	require.True(t, res.Handled, text)
	sess, err := a.Store.Load(context.Background(), "cli:t")
	require.NoError(t, err)
	i := sess.Find(turn, "final")
	require.GreaterOrEqual(t, i, 0, "the answer is journaled")
	return sess.Messages[i].Content
}

func TestWorkspacePromptCommands(t *testing.T) {
	a := newActivities(t, nil)
	require.Equal(t, "Dream memory instructions: nanobot default\n\n- Editable file: `prompts/dream.md`\n- Run `/dream-prompt init` to create an editable copy.",
		command(t, a, "t1", "/dream-prompt"))
	require.Contains(t, command(t, a, "t2", "/dream-prompt INIT"), "Created Dream memory instructions at `prompts/dream.md`.")
	written, err := os.ReadFile(filepath.Join(a.Workspace, "prompts", "dream.md"))
	require.NoError(t, err)
	require.Equal(t, DreamSystemPrompt+"\n", string(written), "init copies the default to edit")
	require.Contains(t, command(t, a, "t3", "/dream-prompt init"), "Dream memory instructions already exist at `prompts/dream.md`.")
	require.Contains(t, command(t, a, "t4", "/dream-prompt"), "Dream memory instructions: custom for this workspace")
	require.Equal(t, "Usage: /dream-prompt [init]", command(t, a, "t5", "/dream-prompt now"))

	require.Contains(t, command(t, a, "t6", "/evaluator-prompt"), "Heartbeat evaluator prompt: nanobot default")
	require.NoError(t, os.WriteFile(filepath.Join(a.Workspace, "prompts", "evaluator.md"), []byte("Only speak up for fires. Call evaluate_notification.\n"), 0o644))
	require.Contains(t, command(t, a, "t7", "/evaluator-prompt"), "Heartbeat evaluator prompt: custom for this workspace")
	h := a.set().Heartbeat
	require.Equal(t, "Only speak up for fires. Call evaluate_notification.", h.evaluatorPrompt(), "the decision reads the override")
	require.NoError(t, os.WriteFile(filepath.Join(a.Workspace, "prompts", "evaluator.md"), []byte("  \n"), 0o644))
	require.Equal(t, HeartbeatDecisionPrompt, h.evaluatorPrompt(), "an emptied file is the default again")
	require.Contains(t, command(t, a, "t8", "/evaluator-prompt init"), "Created heartbeat evaluator prompt at `prompts/evaluator.md`.")
}

func TestTriggerCommandBindsTheChat(t *testing.T) {
	a := newActivities(t, nil)
	require.Equal(t, "Usage: /trigger <name>\n\nCreate a named local trigger bound to this chat session.", command(t, a, "t1", "/trigger"))
	reply := command(t, a, "t2", "/trigger   nightly   build ")
	require.True(t, strings.HasPrefix(reply, "Trigger created: nightly build\nID: trg_"), reply)
	id := strings.TrimPrefix(strings.Split(reply, "\n")[1], "ID: ")
	require.Contains(t, reply, "Command:\nnanobot trigger "+id+` "message"`)
	tr, err := triggers.Open(a.Workspace).Get(id)
	require.NoError(t, err)
	require.Equal(t, "cli:t", tr.SessionKey)
	require.Equal(t, "cli", tr.Channel)
	require.Equal(t, "t", tr.ChatID)
	_, err = triggers.Open(a.Workspace).Get("trg_NOPE")
	require.ErrorIs(t, err, triggers.ErrNotFound)
}

func TestHelpListsExactlyTheCommands(t *testing.T) {
	a := newActivities(t, nil)
	help := command(t, a, "t1", "/help")
	require.True(t, strings.HasPrefix(help, "🐈 nanobot commands:\n/new — Reset this chat and start a fresh conversation.\n"), help)
	require.Contains(t, help, "\n/trigger <name> — Create a named CLI trigger bound to this chat session.\n")
	lines := strings.Split(help, "\n")[1:]
	require.Len(t, lines, len(commands))
	for i, cmd := range commands {
		require.True(t, strings.HasPrefix(lines[i], cmd.name+" — ") || strings.HasPrefix(lines[i], cmd.name+" "+cmd.args+" — "), lines[i])
	}
	for _, name := range []string{"/restart", "/trigger", "/dream-prompt", "/evaluator-prompt", "/dream-log", "/dream-restore", "/skill", "/pairing"} {
		require.Contains(t, help, "\n"+name+" ")
	}
	require.Equal(t, RestartElsewhereReply, command(t, a, "t2", "/restart"), "a /restart no gateway took")
}

func TestDreamLogAndRestoreSpeakNanobots(t *testing.T) {
	a := newActivities(t, nil)
	require.Equal(t, "Dream has not run yet. Run `/dream`, or wait for the next scheduled Dream cycle.\n\n"+dreamPromptHint,
		command(t, a, "t0", "/dream-log"))
	require.Equal(t, "Dream memory has no saved versions to restore yet.", command(t, a, "t1", "/dream-restore"))

	repo, err := gitstore.Open(a.Workspace)
	require.NoError(t, err)
	mem := filepath.Join(a.Workspace, "memory", "MEMORY.md")
	require.NoError(t, os.MkdirAll(filepath.Dir(mem), 0o755))
	require.NoError(t, os.WriteFile(mem, []byte("- likes tea\n"), 0o644))
	_, _, err = repo.Commit("init: memory as written by hand", time.Now())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(mem, []byte("- likes coffee\n"), 0o644))
	dreamed, _, err := repo.Commit(DreamCommitMessage, time.Now())
	require.NoError(t, err)
	short := dreamed[:7]

	log := command(t, a, "t2", "/dream-log")
	require.True(t, strings.HasPrefix(log, "## Dream Update\n\nHere is the latest Dream memory change.\n\n- Commit: `"+short+"`\n- Time: "), log)
	require.Contains(t, log, "- Changed files: `memory/MEMORY.md`\n\nUse `/dream-restore "+short+"` to undo this change.\n\n```diff\n")
	require.Contains(t, log, "+- likes coffee")
	require.Contains(t, command(t, a, "t3", "/dream-log zzzz"), "Couldn't find Dream change `zzzz`.")

	list := command(t, a, "t4", "/dream-restore")
	require.Contains(t, list, "## Dream Restore\n\nChoose a Dream memory version to restore. Latest first:\n\n- `"+short+"` ")
	require.NotContains(t, list, "init: memory", "only Dream's own versions")
	all, err := repo.Log(5)
	require.NoError(t, err)
	require.Contains(t, command(t, a, "t5", "/dream-restore "+all[1].Short()), "Only Dream memory versions can be restored.")

	restored := command(t, a, "t6", "/dream-restore "+short)
	require.True(t, strings.HasPrefix(restored, "Restored Dream memory to the state before `"+short+"`.\n\n- New safety commit: `"), restored)
	require.Contains(t, restored, "- Restored files: `memory/MEMORY.md`")
	got, err := os.ReadFile(mem)
	require.NoError(t, err)
	require.Equal(t, "- likes tea\n", string(got), "the Dream commit is undone")
}
