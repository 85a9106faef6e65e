package activities

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

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
