package integration

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/cron"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/schedules"
)

// reminderModel answers every message of a turn, in order, whatever the
// order they arrived in: a request to set or stop a reminder is a cron tool
// call, a tool result becomes "Done: …", and each fired job (one may be
// injected into a busy turn) becomes one reminder.
type reminderModel struct {
	mu       sync.Mutex
	add      string // the cron call's arguments for "remind me"
	reminder string // what a fired job says
	calls    int
}

func (m *reminderModel) handle(req *modeltest.RecordedRequest) modeltest.Step {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	msgs := req.Messages
	start := 0 // this turn's messages follow the last final answer
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == chat.RoleAssistant && len(msgs[i].ToolCalls) == 0 {
			start = i + 1
			break
		}
	}
	var replies []string
	var ask string
	for _, msg := range msgs[start:] {
		switch {
		case msg.Role == chat.RoleTool:
			replies = append(replies, "Done: "+strings.SplitN(msg.Content, "\n", 2)[0])
			ask = ""
		case msg.Role == chat.RoleUser:
			for range strings.Count(msg.Content, "[Scheduled task]") {
				replies = append(replies, m.reminder)
			}
			if strings.Contains(msg.Content, "remind") {
				ask = msg.Content
			}
		}
	}
	call := func(args string) modeltest.Step {
		return modeltest.ToolCalls(modeltest.Call{ID: fmt.Sprintf("cron_%d", m.calls), Name: "cron", Args: args})
	}
	switch {
	case strings.Contains(ask, "stop reminding me"):
		_, id, _ := strings.Cut(ask, "job ")
		return call(fmt.Sprintf(`{"action":"remove","job_id":%q}`, strings.Fields(id)[0]))
	case strings.Contains(ask, "remind me"):
		return call(m.add)
	case len(replies) == 0:
		return modeltest.Text("?")
	}
	return modeltest.Text(strings.Join(replies, "\n"))
}

var createdJobRe = regexp.MustCompile(`Done: Created job .*\(id: ([0-9a-f]+)\)`)

// jobRuns lists a job's ScheduledTurn workflows (one per firing).
func jobRuns(t *testing.T, dev *testenv.DevServer, id string) []*workflowpb.WorkflowExecutionInfo {
	t.Helper()
	resp, err := dev.Client.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
		Query: fmt.Sprintf("WorkflowType = '%s' AND WorkflowId STARTS_WITH '%s-'", protocol.ScheduledTurnWorkflowName, protocol.CronScheduleID(id))})
	require.NoError(t, err)
	return resp.Executions
}

// cronRemovedAt is when the cron tool's remove call completed in a run of
// the session's turn workflow, by the server's clock.
func cronRemovedAt(t *testing.T, dev *testenv.DevServer, sessionKey string) time.Time {
	t.Helper()
	ctx := context.Background()
	runs, err := dev.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query: fmt.Sprintf("WorkflowId = '%s'", protocol.TurnWorkflowID(sessionKey))})
	require.NoError(t, err)
	for _, run := range runs.Executions {
		removeCall := int64(0)
		for _, ev := range testenv.History(t, dev.Client, run.Execution.WorkflowId, run.Execution.RunId).Events {
			if ev.GetActivityTaskScheduledEventAttributes() != nil && payloadString(t, ev.GetUserMetadata().GetSummary()) == "tool cron action=remove" {
				removeCall = ev.GetEventId()
			}
			if c := ev.GetActivityTaskCompletedEventAttributes(); c != nil && removeCall != 0 && c.GetScheduledEventId() == removeCall {
				return ev.GetEventTime().AsTime()
			}
		}
	}
	t.Fatalf("no completed cron remove call in the runs of %s", protocol.TurnWorkflowID(sessionKey))
	return time.Time{}
}

// TestTelegramReminderEndToEnd is issue 9's "done when" on the real
// gateway, telegram-test-api and temporal-dev: a user asks for a reminder
// every 2 s, the model calls the cron tool, the reminders arrive in that
// chat until the user asks to stop, the model removes the job, `nanobot
// cron list` no longer shows it, and Temporal holds no schedule for it and
// no firing started after the removal.
func TestTelegramReminderEndToEnd(t *testing.T) {
	tg := startTelegramEmulator(t)
	dev := testenv.StartDevServer(t)
	m := &reminderModel{
		add:      `{"action":"add","name":"stretch","message":"Remind the user to stretch","every_seconds":2}`,
		reminder: "Time to stretch!",
	}
	model := modeltest.New().Handle(m.handle)
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), map[string]any{
		"channels": map[string]any{"telegram": map[string]any{
			"enabled": true, "token": tg.Token, "apiBase": tg.URL, "allowFrom": []string{"1001"},
		}},
	})
	env := home.Env(dev.Addr, "NANOBOT_STREAM=false")
	logs := startChannelGateway(t, env, "telegram")
	alice := tgUser{ID: 1001, FirstName: "Alice", Username: "alice"}
	reminders := func(msgs []botMessage) int {
		n := 0
		for _, b := range msgs {
			n += strings.Count(b.Text, m.reminder)
		}
		return n
	}
	waitFor := func(what string, cond func([]botMessage) bool) []botMessage {
		t.Helper()
		var msgs []botMessage
		require.Eventually(t, func() bool {
			msgs = tg.botMessages(t, 1001)
			return cond(msgs)
		}, 90*time.Second, 100*time.Millisecond, "%s; bot messages: %+v\ngateway:\n%s", what, msgs, logs.String())
		return msgs
	}

	tg.say(t, alice, 1001, "private", "please remind me to stretch every 2 seconds")
	var id string
	waitFor("the job is set up", func(msgs []botMessage) bool {
		for _, b := range msgs {
			if sm := createdJobRe.FindStringSubmatch(b.Text); sm != nil {
				id = sm[1]
			}
		}
		return id != ""
	})
	desc, err := schedules.Describe(context.Background(), dev.Client, protocol.CronScheduleID(id))
	require.NoError(t, err, "the cron tool made a Temporal schedule")
	require.False(t, desc.Schedule.State.Paused)

	waitFor("two reminders reach the chat", func(msgs []botMessage) bool { return reminders(msgs) >= 2 })
	out, stderr, code := runNanobot(t, env, "cron", "list")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^`+id+`\s+stretch\s+every 2s\s+\S+ \(UTC\)\s+telegram:1001\s+active$`, out)
	t.Logf("nanobot cron list while the job runs:\n%s", out)

	tg.say(t, alice, 1001, "private", "stop reminding me: job "+id)
	waitFor("the model removes the job", func(msgs []botMessage) bool {
		for _, b := range msgs {
			if strings.Contains(b.Text, "Done: Removed job "+id) {
				return true
			}
		}
		return false
	})
	_, err = schedules.Describe(context.Background(), dev.Client, protocol.CronScheduleID(id))
	require.True(t, schedules.IsNotFound(err), "the job's schedule is gone: %v", err)
	out, stderr, code = runNanobot(t, env, "cron", "list")
	require.Equal(t, 0, code, stderr)
	require.NotContains(t, out, id, "cron list no longer shows the job")
	jobs, err := (&cron.Service{Client: dev.Client}).List(context.Background())
	require.NoError(t, err)
	for _, j := range jobs {
		require.True(t, j.Protected, "only system jobs are left: %+v", j)
	}

	// No more reminders: every firing started before the remove call
	// completed, and each firing was answered in the chat exactly once.
	removedAt := cronRemovedAt(t, dev, "telegram:1001")
	var fired []time.Time
	var msgs []botMessage
	require.Eventually(t, func() bool {
		fired = fired[:0]
		open := 0
		for _, e := range jobRuns(t, dev, id) {
			fired = append(fired, e.GetStartTime().AsTime())
			if e.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				open++
			}
		}
		msgs = tg.botMessages(t, 1001)
		return open == 0 && reminders(msgs) == len(fired)
	}, time.Minute, 200*time.Millisecond, "every firing completes and is answered once; %d firings, messages %+v", len(fired), msgs)
	require.GreaterOrEqual(t, len(fired), 2)
	for _, at := range fired {
		require.True(t, at.Before(removedAt), "a firing started at %s, after the removal at %s", at, removedAt)
	}
	t.Logf("%d reminders for %d firings; removal at %s; nanobot cron list after:\n%s", reminders(msgs), len(fired), removedAt.Format(time.RFC3339Nano), out)
}
