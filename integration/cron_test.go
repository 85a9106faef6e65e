package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/cron"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/tools"
)

// chatInbox stands in for the gateway holding a channel: it serves the
// channel's delivery queue and keeps what was delivered to each chat.
type chatInbox struct {
	mu  sync.Mutex
	got map[string][]string // chat ID → texts, in order
}

func serveChannel(t *testing.T, dev *testenv.DevServer, channel string) *chatInbox {
	t.Helper()
	in := &chatInbox{got: map[string][]string{}}
	w := worker.New(dev.Client, protocol.ChannelQueue(channel), worker.Options{})
	w.RegisterActivityWithOptions(func(_ context.Context, d protocol.DeliverInput) error {
		in.mu.Lock()
		defer in.mu.Unlock()
		in.got[d.Route.ChatID] = append(in.got[d.Route.ChatID], d.Text)
		return nil
	}, activity.RegisterOptions{Name: protocol.ActivityDeliver})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return in
}

// telegramRig is what the schedule tests share: the dev server, the scripted
// model behind handle, a worker without streaming, and the telegram delivery
// queue served in the test (the gateway's part).
type telegramRig struct {
	dev   *testenv.DevServer
	model *modeltest.Server
	home  *testenv.Home
	env   []string
	logs  *bytes.Buffer
	inbox *chatInbox
}

func newTelegramRig(t *testing.T, handle func(*modeltest.RecordedRequest) modeltest.Step, cfg map[string]any) *telegramRig {
	t.Helper()
	r := &telegramRig{dev: testenv.StartDevServer(t), model: modeltest.New().Handle(handle)}
	t.Cleanup(r.model.Close)
	r.home = testenv.NewHome(t, r.model.URL(), cfg)
	r.env = r.home.Env(r.dev.Addr, "NANOBOT_STREAM=false")
	_, r.logs = startWorker(t, r.env)
	r.inbox = serveChannel(t, r.dev, "telegram")
	return r
}

func (c *chatInbox) texts(chatID string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.got[chatID]...)
}

func (c *chatInbox) count(chatID, text string) int {
	n := 0
	for _, s := range c.texts(chatID) {
		if s == text {
			n++
		}
	}
	return n
}

// cronModel sets up jobs when asked and, in a scheduled turn, first tries
// to add a job (which must be refused) and then says the reminder.
type cronModel struct {
	mu      sync.Mutex
	calls   int
	refused int
	add     string // the cron call's arguments for "remind me"
}

func (m *cronModel) handle(req *modeltest.RecordedRequest) modeltest.Step {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	last := req.Messages[len(req.Messages)-1]
	call := func(args string) modeltest.Step {
		return modeltest.ToolCalls(modeltest.Call{ID: fmt.Sprintf("cron_%d", m.calls), Name: "cron", Args: args})
	}
	switch {
	case last.Role == chat.RoleTool && strings.HasPrefix(last.Content, tools.CronInCronText):
		m.refused++
		return modeltest.Text("Time to drink water!")
	case last.Role == chat.RoleTool:
		return modeltest.Text("Done: " + strings.SplitN(last.Content, "\n", 2)[0])
	case strings.Contains(last.Content, "stop reminding me"):
		_, id, _ := strings.Cut(last.Content, "job ")
		return call(fmt.Sprintf(`{"action":"remove","job_id":%q}`, strings.Fields(id)[0]))
	case strings.Contains(last.Content, "[Scheduled task]"):
		return call(`{"action":"add","message":"another one","every_seconds":1}`)
	case strings.Contains(last.Content, "remind me"):
		return call(m.add)
	}
	return modeltest.Text("?")
}

func publishTo(t *testing.T, dev *testenv.DevServer, route protocol.Route, id, text string) {
	t.Helper()
	bus := &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model", LLMHeartbeat: 2 * time.Second})}
	_, err := bus.Publish(context.Background(), protocol.Inbound{ID: id, SessionKey: protocol.SessionKey(route.Channel, route.ChatID), Route: route, Content: text, SentAt: time.Now()})
	require.NoError(t, err)
}

// jobIDFrom reads the job ID out of "Created job 'name' (id: …)".
func jobIDFrom(t *testing.T, text string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, "(id: ")
	require.True(t, ok, text)
	return strings.TrimSuffix(strings.TrimSuffix(rest, ")"), ")")
}

// TestCronEveryJobRemindsTheChatUntilRemoved: the model schedules a
// reminder every 2 s from a Telegram chat; the job fires at least twice,
// each reply reaches that chat, a scheduled turn cannot add jobs (nanobot's
// text), `nanobot cron list` shows the job with its next run, and once the
// model removes it the schedule is gone.
func TestCronEveryJobRemindsTheChatUntilRemoved(t *testing.T) {
	m := &cronModel{add: `{"action":"add","name":"water","message":"Remind the user to drink water","every_seconds":2}`}
	r := newTelegramRig(t, m.handle, nil)
	dev, home, env, logs, inbox := r.dev, r.home, r.env, r.logs, r.inbox
	route := protocol.Route{Channel: "telegram", ChatID: "4242", SenderID: "1001"}

	publishTo(t, dev, route, "m1", "remind me to drink water every 2 seconds")
	var created string
	require.Eventually(t, func() bool {
		for _, s := range inbox.texts("4242") {
			if strings.HasPrefix(s, "Done: Created job 'water'") {
				created = s
			}
		}
		return created != ""
	}, time.Minute, 50*time.Millisecond, "the job is set up; worker:\n%s", logs)
	id := jobIDFrom(t, created)

	require.Eventually(t, func() bool { return inbox.count("4242", "Time to drink water!") >= 2 }, time.Minute, 100*time.Millisecond,
		"two reminders reach the chat; got %q\nworker:\n%s", inbox.texts("4242"), logs)
	m.mu.Lock()
	require.GreaterOrEqual(t, m.refused, 2, "each scheduled turn's add was refused")
	m.mu.Unlock()

	out, stderr, code := runNanobot(t, env, "cron", "list")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "ID")
	var row string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, id) {
			row = line
		}
	}
	require.NotEmpty(t, row, "cron list shows the job:\n%s", out)
	require.Regexp(t, `water\s+every 2s\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(UTC\)\s+telegram:4242\s+active`, row)
	t.Logf("nanobot cron list:\n%s", out)

	publishTo(t, dev, route, "m2", "stop reminding me: job "+id)
	require.Eventually(t, func() bool { return inbox.count("4242", "Done: Removed job "+id) == 1 }, time.Minute, 100*time.Millisecond,
		"the model removes the job; got %q %s", inbox.texts("4242"), logs)
	jobs, err := (&cron.Service{Client: dev.Client}).List(context.Background())
	require.NoError(t, err)
	require.Empty(t, jobs, "the removed job is gone from Temporal")
	_, scheduled := sessionLines(t, home, "telegram:4242")
	kinds := 0
	for _, msg := range scheduled {
		if msg.Role == chat.RoleUser && strings.Contains(msg.Content, "[Scheduled task] The cron job 'water' fired.") {
			kinds++
		}
	}
	require.GreaterOrEqual(t, kinds, 2, "the fired job's turns are in the chat's own session")
}

// TestCronAtJobFiresOnceAndIsGone: an "at" job added with the CLI fires
// once into its chat and then is gone from `nanobot cron list`.
func TestCronAtJobFiresOnceAndIsGone(t *testing.T) {
	m := &cronModel{}
	r := newTelegramRig(t, m.handle, nil)
	dev, env, logs, inbox := r.dev, r.env, r.logs, r.inbox

	at := time.Now().Add(6 * time.Second).UTC().Format("2006-01-02T15:04:05")
	out, stderr, code := runNanobot(t, env, "cron", "add", "--name", "call", "--message", "Remind the user to call mum",
		"--at", at, "--channel", "telegram", "--to", "77")
	require.Equal(t, 0, code, stderr)
	id := jobIDFrom(t, strings.TrimSpace(out))
	out, _, _ = runNanobot(t, env, "cron", "list")
	require.Contains(t, out, id, "the job is listed before it fires")
	require.Contains(t, out, "at "+at+"Z (UTC)")

	require.Eventually(t, func() bool { return inbox.count("77", "Time to drink water!") == 1 }, time.Minute, 100*time.Millisecond,
		"the job fires; got %q\nworker:\n%s", inbox.texts("77"), logs)
	require.Eventually(t, func() bool {
		out, _, _ := runNanobot(t, env, "cron", "list")
		return !strings.Contains(out, id)
	}, 30*time.Second, 200*time.Millisecond, "the at job is gone from cron list once it fired")
	out, stderr, code = runNanobot(t, env, "cron", "run", id)
	require.Equal(t, 1, code, out)
	require.Contains(t, stderr, "job "+id+" not found")
	require.Equal(t, 1, inbox.count("77", "Time to drink water!"), "fired once")
	resp, err := dev.Client.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
		Query: fmt.Sprintf("WorkflowType = '%s'", protocol.ScheduledTurnWorkflowName)})
	require.NoError(t, err)
	require.Len(t, resp.Executions, 1, "one firing")
	require.True(t, strings.HasPrefix(resp.Executions[0].Execution.WorkflowId, "cron/"+id+"-"), resp.Executions[0].Execution.WorkflowId)
	testenv.RecordHistory(t, dev.Client, resp.Executions[0].Execution.WorkflowId, "", "scheduled_turn_at")
}

// TestCronCLIRejectsABadExpression: a bad expression is a clear error and creates nothing.
func TestCronCLIRejectsABadExpression(t *testing.T) {
	dev := testenv.StartDevServer(t)
	home := testenv.NewHome(t, "http://127.0.0.1:1/v1", nil)
	env := home.Env(dev.Addr)
	_, stderr, code := runNanobot(t, env, "cron", "add", "--message", "stand up", "--cron", "0 25 * * *")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "invalid cron expression '0 25 * * *'")
	out, _, code := runNanobot(t, env, "cron", "list")
	require.Equal(t, 0, code)
	require.Equal(t, "No scheduled jobs.\n", out)
}

// TestCronPausedInTemporalStopsFiring: pausing a job's schedule the way
// the Web UI does (ScheduleHandle.Pause) stops its firings — while a
// second job keeps firing three more times, the paused one takes no
// action — `nanobot cron list` shows it paused, and unpausing resumes it.
func TestCronPausedInTemporalStopsFiring(t *testing.T) {
	m := &reminderModel{reminder: "Reminder!"}
	r := newTelegramRig(t, m.handle, nil)
	dev, env, logs, inbox := r.dev, r.env, r.logs, r.inbox
	ctx := context.Background()
	svc := &cron.Service{Client: dev.Client}
	job, err := svc.Add(ctx, cron.Job{Name: "paused", Message: "ping", Every: time.Second, Route: protocol.Route{Channel: "telegram", ChatID: "1"}})
	require.NoError(t, err)
	_, err = svc.Add(ctx, cron.Job{Name: "control", Message: "ping", Every: time.Second, Route: protocol.Route{Channel: "telegram", ChatID: "2"}})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return inbox.count("1", "Reminder!") >= 1 }, time.Minute, 50*time.Millisecond,
		"the job fires before it is paused; worker:\n%s", logs)

	handle := dev.Client.ScheduleClient().GetHandle(ctx, protocol.CronScheduleID(job.ID))
	require.NoError(t, handle.Pause(ctx, client.SchedulePauseOptions{Note: "paused in the Web UI"}))
	var paused *client.ScheduleDescription
	require.Eventually(t, func() bool { // Pause is a signal to the scheduler; a describe after it was taken shows it
		paused, err = handle.Describe(ctx)
		return err == nil && paused.Schedule.State.Paused
	}, 30*time.Second, 50*time.Millisecond)
	require.Equal(t, "paused in the Web UI", paused.Schedule.State.Note)
	t.Logf("paused: %d actions, next action times %v", paused.Info.NumActions, paused.Info.NextActionTimes)

	out, stderr, code := runNanobot(t, env, "cron", "list")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^`+job.ID+`\s+paused\s+every 1s\s+-\s+telegram:1\s+paused$`, out, "cron list shows the job paused, with no next run")
	t.Logf("nanobot cron list with the job paused:\n%s", out)
	listed, err := svc.Get(ctx, job.ID)
	require.NoError(t, err)
	require.Contains(t, cron.FormatList([]cron.Job{listed}, "UTC"), "Paused (in Temporal).", "the cron tool tells the model too")
	require.NotContains(t, cron.FormatList([]cron.Job{listed}, "UTC"), "Next run", "a paused job has no next run")

	control := inbox.count("2", "Reminder!")
	require.Eventually(t, func() bool { return inbox.count("2", "Reminder!") >= control+3 }, time.Minute, 50*time.Millisecond,
		"the other job keeps firing")
	still, err := handle.Describe(ctx)
	require.NoError(t, err)
	require.Equal(t, paused.Info.NumActions, still.Info.NumActions, "the paused job took no action while the other fired 3 times")
	require.Len(t, jobRuns(t, dev, job.ID), paused.Info.NumActions, "one ScheduledTurn per action, none since the pause")

	require.NoError(t, handle.Unpause(ctx, client.ScheduleUnpauseOptions{Note: "resumed"}))
	reminded := inbox.count("1", "Reminder!")
	require.Eventually(t, func() bool { return inbox.count("1", "Reminder!") > reminded }, time.Minute, 50*time.Millisecond,
		"unpaused, the job fires again")
	out, _, _ = runNanobot(t, env, "cron", "list")
	require.Regexp(t, `(?m)^`+job.ID+`\s+paused\s+every 1s\s+\S+ \(UTC\)\s+telegram:1\s+active$`, out)
}

// uiPayloads is the memo of a schedule or workflow as the Web UI's HTTP API
// returns it: each field a payload whose data is base64 of JSON.
type uiPayloads struct {
	Fields map[string]struct {
		Data []byte `json:"data"`
	} `json:"fields"`
}

func (m uiPayloads) text(field string) string { return string(m.Fields[field].Data) }

// uiGet reads one Web UI API path into out and returns the raw JSON.
func uiGet(t *testing.T, base, path string, out any) string {
	t.Helper()
	resp, err := http.Get(base + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, body)
	require.NoError(t, json.Unmarshal(body, out), "%s: %s", path, body)
	return string(body)
}

// TestCronJobAndSubagentAsTheWebUIShowsThem is the evidence for issue 9's
// closing note: a cron job and a running subagent as `nanobot cron list`
// and the Temporal Web UI's own HTTP API (what its pages render) show
// them, by readable IDs and memo.
func TestCronJobAndSubagentAsTheWebUIShowsThem(t *testing.T) {
	uiPort := testenv.FreePort(t)
	dev := testenv.StartDevServer(t, "--headless=false", "--ui-port", strconv.Itoa(uiPort))
	ui := "http://127.0.0.1:" + strconv.Itoa(uiPort)
	m := &subagentModel{subStep: func(int) modeltest.Step { return modeltest.Block().Text("never") }}
	model := modeltest.New().Handle(m.handle)
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	env := home.Env(dev.Addr)
	_, logs := startWorker(t, env)

	out, stderr, code := runNanobot(t, env, "cron", "add", "--name", "water", "--message", "Remind the user to drink water",
		"--every", "3600", "--channel", "cli", "--to", "sub")
	require.Equal(t, 0, code, stderr)
	jobID := jobIDFrom(t, strings.TrimSpace(out))
	publishSub(t, dev, "m1", "how many files are there?")
	require.Eventually(t, func() bool { return model.Waiting() == 1 }, time.Minute, 50*time.Millisecond, "the subagent runs; %s", logs)
	subID, _ := subagentRun(t, dev)
	require.True(t, strings.HasPrefix(subID, "subagent/"), subID)

	out, stderr, code = runNanobot(t, env, "cron", "list")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^`+jobID+`\s+water\s+every 1h\s+\S+ \(UTC\)\s+cli:sub\s+active$`, out)
	t.Logf("$ nanobot cron list\n%s", out)

	var schedules struct {
		Schedules []struct {
			ScheduleID string     `json:"scheduleId"`
			Memo       uiPayloads `json:"memo"`
		} `json:"schedules"`
	}
	var raw string
	require.Eventually(t, func() bool {
		raw = uiGet(t, ui, "/api/v1/namespaces/default/schedules", &schedules)
		return len(schedules.Schedules) > 0
	}, 30*time.Second, 200*time.Millisecond)
	t.Logf("GET %s/api/v1/namespaces/default/schedules\n%s", ui, raw)
	var found bool
	for _, s := range schedules.Schedules {
		if s.ScheduleID == protocol.CronScheduleID(jobID) {
			found = true
			require.Equal(t, `"cli:sub"`, s.Memo.text("session"))
			require.Equal(t, `"Remind the user to drink water"`, s.Memo.text("message"))
			require.Equal(t, `"water"`, s.Memo.text("name"))
			t.Logf("the UI's schedule %s, memo decoded: name=%s session=%s message=%s timing=%s", s.ScheduleID,
				s.Memo.text("name"), s.Memo.text("session"), s.Memo.text("message"), s.Memo.text("timing"))
		}
	}
	require.True(t, found, "the UI lists schedule cron/%s", jobID)

	var workflows struct {
		Executions []struct {
			Execution struct {
				WorkflowID string `json:"workflowId"`
			} `json:"execution"`
			Type   struct{ Name string } `json:"type"`
			Status string                `json:"status"`
			Memo   uiPayloads            `json:"memo"`
		} `json:"executions"`
	}
	query := url.QueryEscape(fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running'", protocol.SubagentWorkflowName))
	require.Eventually(t, func() bool {
		raw = uiGet(t, ui, "/api/v1/namespaces/default/workflows?query="+query, &workflows)
		return len(workflows.Executions) == 1
	}, 30*time.Second, 200*time.Millisecond, "the UI lists the running subagent: %s", raw)
	t.Logf("GET %s/api/v1/namespaces/default/workflows?query=%s\n%s", ui, query, raw)
	sub := workflows.Executions[0]
	require.Equal(t, subID, sub.Execution.WorkflowID)
	require.Equal(t, "WORKFLOW_EXECUTION_STATUS_RUNNING", sub.Status)
	require.Equal(t, `"files"`, sub.Memo.text("label"))
	require.Equal(t, `"cli:sub"`, sub.Memo.text("origin"))
	require.Equal(t, `"subagent"`, sub.Memo.text("kind"))
	t.Logf("the UI's workflow %s (%s, %s), memo decoded: label=%s origin=%s kind=%s", sub.Execution.WorkflowID, sub.Type.Name, sub.Status,
		sub.Memo.text("label"), sub.Memo.text("origin"), sub.Memo.text("kind"))
	model.Release()
}

// TestCronFiringWaitsForTheBusySession: a job that fires while its
// session's turn runs waits for that turn (nanobot defers cron turns of a
// busy session) and then runs as a turn of its own: the user's answer comes
// first, the reminder after it, the scheduled turn still may not add jobs,
// and the firing's workflow completes.
func TestCronFiringWaitsForTheBusySession(t *testing.T) {
	m := &cronModel{}
	r := newTelegramRig(t, func(req *modeltest.RecordedRequest) modeltest.Step {
		if last := req.Messages[len(req.Messages)-1]; last.Role == chat.RoleUser && strings.Contains(last.Content, "a long question") {
			return modeltest.Block().Text("Here is the long answer.")
		}
		return m.handle(req)
	}, nil)
	dev, model, home, logs, inbox := r.dev, r.model, r.home, r.logs, r.inbox
	route := protocol.Route{Channel: "telegram", ChatID: "88", SenderID: "1001"}
	ctx := context.Background()

	publishTo(t, dev, route, "m1", "a long question")
	require.Eventually(t, func() bool { return model.Waiting() == 1 }, time.Minute, 50*time.Millisecond, "the turn is busy; %s", logs)
	svc := &cron.Service{Client: dev.Client}
	job, err := svc.Add(ctx, cron.Job{Name: "water", Message: "Remind the user to drink water", Every: time.Hour, Route: route})
	require.NoError(t, err)
	require.NoError(t, svc.Run(ctx, job.ID))

	var firing string
	require.Eventually(t, func() bool {
		runs := jobRuns(t, dev, job.ID)
		if len(runs) != 1 {
			return false
		}
		firing = runs[0].Execution.WorkflowId
		desc, err := dev.Client.DescribeWorkflowExecution(ctx, firing, "")
		if err != nil || len(desc.PendingActivities) != 1 {
			return false
		}
		return desc.PendingActivities[0].GetActivityType().GetName() == protocol.ActivityPublishScheduled &&
			desc.PendingActivities[0].GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED
	}, 30*time.Second, 100*time.Millisecond, "the firing waits in PublishScheduled while the session is busy")
	require.Equal(t, 1, model.Count(), "the waiting job's message reached no model")

	model.Release()
	require.Eventually(t, func() bool { return len(inbox.texts("88")) == 2 }, time.Minute, 50*time.Millisecond,
		"both answers arrive; got %q\n%s", inbox.texts("88"), logs)
	require.Equal(t, []string{"Here is the long answer.", "Time to drink water!"}, inbox.texts("88"))
	m.mu.Lock()
	require.Equal(t, 1, m.refused, "the job's turn is a scheduled turn: its cron add was refused")
	m.mu.Unlock()
	jobs, err := svc.List(ctx)
	require.NoError(t, err)
	require.Len(t, jobs, 1, "no job was added from the scheduled message")
	require.NoError(t, dev.Client.GetWorkflow(ctx, firing, "").Get(ctx, nil), "the firing completes")

	turnOf := map[string]string{}
	_, msgs := sessionLines(t, home, "telegram:88")
	for _, msg := range msgs {
		switch {
		case msg.Role == chat.RoleUser && strings.Contains(msg.Content, "a long question"):
			turnOf["user"] = msg.Turn
		case msg.Role == chat.RoleUser && strings.Contains(msg.Content, "[Scheduled task]"):
			turnOf["cron"] = msg.Turn
		}
	}
	require.NotEmpty(t, turnOf["user"])
	require.NotEmpty(t, turnOf["cron"])
	require.NotEqual(t, turnOf["user"], turnOf["cron"], "the job's message had a turn of its own, not an injection")
}
