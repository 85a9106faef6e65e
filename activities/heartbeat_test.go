package activities

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/session"
)

// heartbeatFixture: a heartbeat turn that answered, and chats last active
// in this order (oldest first): telegram:old, slack:off (disabled), telegram:new, cli:direct.
func heartbeatFixture(t *testing.T, model *modeltest.Server) (*rig, *testsuite.TestActivityEnvironment) {
	a := newActivities(t, model)
	cfg := config.Default()
	require.NoError(t, cfg.SetChannelBlock("telegram", map[string]any{"enabled": true}))
	a.Config = func() *config.Config { return cfg }
	ctx := context.Background()
	_, err := a.Store.Append(ctx, protocol.HeartbeatSessionKey,
		chat.Message{Role: chat.RoleUser, Content: "[Heartbeat] ...", Turn: "hb1", EntryID: "user"},
		chat.Message{Role: chat.RoleAssistant, Content: "The build is red.", Turn: "hb1", EntryID: "llm-1"})
	require.NoError(t, err)
	base := time.Now().Add(-time.Hour)
	for i, key := range []string{"telegram:old", "slack:off", "telegram:new", "cli:direct"} {
		_, err := a.Store.Append(ctx, key, chat.Message{Role: chat.RoleUser, Content: "hi", Turn: "t", EntryID: "user"})
		require.NoError(t, err)
		at := base.Add(time.Duration(i) * time.Minute)
		require.NoError(t, os.Chtimes(a.Store.Path(key), at, at))
	}
	return a, decideEnv(a)
}

// decideEnv runs HeartbeatDecide as built from a's dependencies now.
func decideEnv(a *rig) *testsuite.TestActivityEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(a.set().Heartbeat.HeartbeatDecide, activity.RegisterOptions{Name: protocol.ActivityHeartbeatDecide})
	return env
}

func decide(t *testing.T, env *testsuite.TestActivityEnvironment) protocol.HeartbeatDecision {
	val, err := env.ExecuteActivity(protocol.ActivityHeartbeatDecide, protocol.HeartbeatDecideInput{
		SessionKey: protocol.HeartbeatSessionKey, Turn: "hb1", Tasks: "- check the build", Settings: testenv.Settings(protocol.Settings{Model: "m"})})
	require.NoError(t, err)
	var d protocol.HeartbeatDecision
	require.NoError(t, val.Get(&d))
	return d
}

func TestHeartbeatDecisionIsOneForcedCallAtTemperatureZero(t *testing.T) {
	model := modeltest.New(modeltest.ToolCalls(modeltest.Call{ID: "e1", Name: EvaluateNotificationTool, Args: `{"should_notify":true,"reason":"the build broke"}`}))
	defer model.Close()
	_, env := heartbeatFixture(t, model)
	d := decide(t, env)
	require.True(t, d.Notify)
	require.Equal(t, "the build broke", d.Reason)
	require.Equal(t, &protocol.Route{Channel: "telegram", ChatID: "new", Reach: protocol.ReachSomeone}, d.Route, "the most recently active chat on an enabled channel, stamped")
	require.Equal(t, "llm-1", d.EntryID)
	require.Equal(t, "The build is red.", d.Text)

	reqs := model.Requests()
	require.Len(t, reqs, 1)
	req := reqs[0]
	require.NotNil(t, req.Temperature)
	require.Zero(t, *req.Temperature)
	require.Len(t, req.Tools, 1)
	require.Equal(t, EvaluateNotificationTool, req.Tools[0].Name)
	require.Contains(t, req.ToolChoice, EvaluateNotificationTool)
	require.Contains(t, req.Messages[1].Content, "## Original task\n- check the build")
	require.Contains(t, req.Messages[1].Content, "## Agent response\nThe build is red.")
}

func TestHeartbeatDecisionFailsClosed(t *testing.T) {
	for name, step := range map[string]modeltest.Step{
		"no tool call":    modeltest.Text("yes, tell them"),
		"bad arguments":   modeltest.ToolCalls(modeltest.Call{ID: "e1", Name: EvaluateNotificationTool, Args: `{"should_notify":"maybe"}`}),
		"missing verdict": modeltest.ToolCalls(modeltest.Call{ID: "e1", Name: EvaluateNotificationTool, Args: `{"reason":"?"}`}),
	} {
		t.Run(name, func(t *testing.T) {
			model := modeltest.New(step)
			defer model.Close()
			_, env := heartbeatFixture(t, model)
			d := decide(t, env)
			require.False(t, d.Notify)
			require.Contains(t, d.Reason, "did not call evaluate_notification")
			require.Equal(t, 1, model.Count())
		})
	}
}

func TestHeartbeatDecisionWithoutAChatAsksNoModel(t *testing.T) {
	model := modeltest.New()
	defer model.Close()
	a, _ := heartbeatFixture(t, model)
	cfg := config.Default() // no channel enabled
	a.Config = func() *config.Config { return cfg }
	env := decideEnv(a)
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1") // the web chat is off against an external cluster
	d := decide(t, env)
	require.False(t, d.Notify)
	require.Nil(t, d.Route)
	require.Zero(t, model.Count())
}

func TestHeartbeatTrimKeepsARecentSuffixFromAUserMessage(t *testing.T) {
	a := newActivities(t, nil)
	ctx := context.Background()
	var msgs []chat.Message
	for i := 0; i < 5; i++ { // user, assistant(tool call), tool, assistant
		turn := fmt.Sprint("t", i)
		msgs = append(msgs,
			chat.Message{Role: chat.RoleUser, Content: "tasks", Turn: turn, EntryID: "user"},
			chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: turn, Type: "function", Function: chat.FunctionCall{Name: "read_file", Arguments: "{}"}}}, Turn: turn, EntryID: "llm-1"},
			chat.Message{Role: chat.RoleTool, ToolCallID: turn, Content: "ok", Turn: turn, EntryID: turn},
			chat.Message{Role: chat.RoleAssistant, Content: "done " + turn, Turn: turn, EntryID: "llm-2"})
	}
	_, err := a.Store.Append(ctx, protocol.HeartbeatSessionKey, msgs...)
	require.NoError(t, err)
	require.NoError(t, a.Store.Update(ctx, protocol.HeartbeatSessionKey, func(s *session.Session) error { s.LastConsolidated = 10; return nil }))

	kept, err := a.set().Heartbeat.HeartbeatTrim(ctx, protocol.HeartbeatTrimInput{SessionKey: protocol.HeartbeatSessionKey, Keep: 6})
	require.NoError(t, err)
	require.Equal(t, 8, kept, "6 would start at a tool call: back to that turn's user message")
	sess, err := a.Store.Load(ctx, protocol.HeartbeatSessionKey)
	require.NoError(t, err)
	require.Len(t, sess.Messages, 8)
	require.Equal(t, chat.RoleUser, sess.Messages[0].Role)
	require.Equal(t, "done t4", sess.Messages[7].Content)
	require.Zero(t, sess.LastConsolidated, "12 dropped, so nothing kept is consolidated")

	kept, err = a.set().Heartbeat.HeartbeatTrim(ctx, protocol.HeartbeatTrimInput{SessionKey: protocol.HeartbeatSessionKey, Keep: 8})
	require.NoError(t, err)
	require.Equal(t, 8, kept, "trimming again changes nothing")
}

func TestHeartbeatTasksReadsTheActiveTasks(t *testing.T) {
	a := newActivities(t, nil)
	res, err := a.set().Heartbeat.HeartbeatTasks(context.Background(), protocol.HeartbeatInput{})
	require.NoError(t, err)
	require.Empty(t, res.Tasks, "no HEARTBEAT.md, no tasks")
	md := "# Heartbeat\n\n## Active Tasks\n- check the build\n\n## Completed\n- old\n"
	require.NoError(t, os.WriteFile(filepath.Join(a.Workspace, HeartbeatFile), []byte(md), 0o644))
	res, err = a.set().Heartbeat.HeartbeatTasks(context.Background(), protocol.HeartbeatInput{})
	require.NoError(t, err)
	require.Equal(t, "- check the build", res.Tasks)
}

func TestHeartbeatDecisionAsksAgainUnforcedWhenTheForcedChoiceIsRefused(t *testing.T) {
	model := modeltest.New(
		modeltest.Error(400, "invalid_request_error", "tool_choice naming a function is not supported"),
		modeltest.ToolCalls(modeltest.Call{ID: "e1", Name: EvaluateNotificationTool, Args: `{"should_notify":false,"reason":"routine"}`}))
	defer model.Close()
	_, env := heartbeatFixture(t, model)
	d := decide(t, env)
	require.False(t, d.Notify)
	require.Equal(t, "routine", d.Reason)
	reqs := model.Requests()
	require.Len(t, reqs, 2)
	require.Contains(t, reqs[0].ToolChoice, EvaluateNotificationTool)
	require.NotContains(t, reqs[1].ToolChoice, EvaluateNotificationTool)
}
