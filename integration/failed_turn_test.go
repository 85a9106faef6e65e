package integration

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestTelegramIsAnsweredOnATemporalWithoutSearchAttributes runs the real
// gateway against telegram-test-api and a temporal-dev started without
// nanobot's search attributes (a cluster where `nanobot setup-temporal`
// never ran). A spawn still runs its subagent and the chat hears both
// replies; a turn that fails for good (AGENTS.md is a directory, so no
// prompt can be built) answers the chat once, with the reason, and the
// journal holds the message and the failure; the next turn runs again.
func TestTelegramIsAnsweredOnATemporalWithoutSearchAttributes(t *testing.T) {
	tg := startTelegramEmulator(t)
	dev := testenv.StartBareDevServer(t)
	m := &subagentModel{subStep: func(int) modeltest.Step { return modeltest.Text("There are 3 files.") }}
	model := modeltest.New().Handle(m.handle)
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), map[string]any{
		"channels": map[string]any{"telegram": map[string]any{
			"enabled": true, "token": tg.Token, "apiBase": tg.URL, "allowFrom": []string{"1001"}, "streaming": false,
		}},
	})
	logs := startChannelGateway(t, home.Env(dev.Addr, "NANOBOT_STREAM=false"), "telegram")
	alice := tgUser{ID: 1001, FirstName: "Alice", Username: "alice"}
	texts := func() []string {
		var out []string
		for _, b := range tg.botMessages(t, 1001) {
			out = append(out, b.Text)
		}
		return out
	}
	waitText := func(what string, want func(string) bool) {
		t.Helper()
		require.Eventually(t, func() bool {
			for _, s := range texts() {
				if want(s) {
					return true
				}
			}
			return false
		}, 90*time.Second, 50*time.Millisecond, "%s; bot said %q\ngateway:\n%s", what, texts(), logs.String())
	}
	is := func(text string) func(string) bool { return func(s string) bool { return s == text } }

	// spawn: counted and started without NanobotSessionKey.
	tg.say(t, alice, 1001, "private", "how many files are there?")
	waitText("the spawn turn's reply", is("I've started a helper on it."))
	waitText("the subagent's report, relayed", is("Your helper reported back."))
	ctx := context.Background()
	resp, err := dev.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query: "WorkflowType = '" + protocol.SubagentWorkflowName + "' AND ParentWorkflowId = 'turn/telegram:1001'"})
	require.NoError(t, err)
	require.Len(t, resp.GetExecutions(), 1)
	sub := resp.GetExecutions()[0]
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, sub.GetStatus())
	require.NotContains(t, sub.GetSearchAttributes().GetIndexedFields(), protocol.SessionKeyAttribute.GetName(), "the namespace has no such attribute")
	_, msgs := sessionLines(t, home, "telegram:1001")
	var spawnResult string
	for _, msg := range msgs {
		if msg.Role == chat.RoleTool && msg.ToolCallID == "sp1" {
			spawnResult = msg.Content
		}
	}
	require.Contains(t, spawnResult, "Subagent [files] started", "spawn's result is a start, not an error")

	// A turn that cannot build its prompt fails for good: the chat is told why.
	agents := filepath.Join(home.Workspace, "AGENTS.md")
	require.NoError(t, os.RemoveAll(agents))
	require.NoError(t, os.Mkdir(agents, 0o755))
	before := model.Count()
	tg.say(t, alice, 1001, "private", "are you there?")
	failed := func(s string) bool {
		return strings.HasPrefix(s, "Sorry, this turn failed: ") && strings.Contains(s, "AGENTS.md") &&
			strings.HasSuffix(s, "Nothing was lost; /history shows what was saved.")
	}
	waitText("the failure reply", failed)
	require.Equal(t, before, model.Count(), "no model call: the turn failed before RUN")
	n := 0
	for _, s := range texts() {
		if failed(s) {
			n++
		}
	}
	require.Equal(t, 1, n, "one failure reply")
	_, msgs = sessionLines(t, home, "telegram:1001")
	last := msgs[len(msgs)-1]
	require.Equal(t, chat.RoleAssistant, last.Role)
	require.True(t, failed(last.Content), "the journal ends with the failure: %q", last.Content)
	require.Equal(t, chat.RoleUser, msgs[len(msgs)-2].Role)
	require.Contains(t, msgs[len(msgs)-2].Content, "are you there?", "the message is kept")
	require.Eventually(t, func() bool {
		desc, err := dev.Client.DescribeWorkflowExecution(ctx, protocol.TurnWorkflowID("telegram:1001"), "")
		return err == nil && desc.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_FAILED
	}, 30*time.Second, 100*time.Millisecond, "the run itself shows as failed in the Web UI")
	runs, err := dev.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "WorkflowId = 'turn/telegram:1001'"})
	require.NoError(t, err)
	for _, run := range runs.GetExecutions() { // newest first: the failed turn, the report, the spawn
		if run.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_FAILED {
			testenv.RecordHistory(t, dev.Client, run.GetExecution().GetWorkflowId(), run.GetExecution().GetRunId(), "turn_failed")
		}
	}
	if n := len(runs.GetExecutions()); n > 0 {
		first := runs.GetExecutions()[n-1].GetExecution()
		testenv.RecordHistory(t, dev.Client, first.GetWorkflowId(), first.GetRunId(), "turn_spawn_without_search_attributes")
	}

	// Fixed: the chat is not stuck.
	require.NoError(t, os.Remove(agents))
	seen := len(texts())
	tg.say(t, alice, 1001, "private", "how many files now?")
	require.Eventually(t, func() bool {
		// The new turn's answer, wherever it lands: its helper's report may already follow it.
		return slices.Contains(texts()[seen:], "I've started a helper on it.")
	}, 90*time.Second, 50*time.Millisecond, "the next turn runs: %q", texts())
}

// TestAgentShowsAFailedTurnAndExitsNonZero: `nanobot agent -m` prints the
// failed turn's one reply and exits 1, so a script sees it.
func TestAgentShowsAFailedTurnAndExitsNonZero(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New(modeltest.Text("never asked"))
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	require.NoError(t, os.Mkdir(filepath.Join(home.Workspace, "AGENTS.md"), 0o755))
	out, errOut, code := runNanobot(t, home.Env(dev.Addr), "agent", "-m", "hello")
	require.Equal(t, 1, code, "stdout: %s\nstderr: %s", out, errOut)
	require.True(t, strings.HasPrefix(out, "Sorry, this turn failed: "), out)
	require.Contains(t, out, "AGENTS.md")
	require.Contains(t, errOut, "the turn failed")
	require.Zero(t, model.Count())
}
