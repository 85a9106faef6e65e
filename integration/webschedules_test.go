package integration

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestWebConsoleSchedules drives the schedules page in Chromium through the
// real gateway on temporal-dev: it lists the heartbeat and a cron job; pause
// then resume changes the job's schedule in Temporal; run now starts a
// heartbeat run that shows up with its inspect link; the endpoints refuse a
// missing token, a foreign Host and a cross-origin POST.
func TestWebConsoleSchedules(t *testing.T) {
	chromium := browser(t)
	model := modeltest.New(modeltest.Text("nothing to do"))
	defer model.Close()
	webPort := testenv.FreePort(t)
	const token = "t0k3n-schedules"
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"web": map[string]any{"port": webPort, "token": token}}})
	env, _ := embeddedEnv(t, home)
	_, out, errOut := startWebGateway(t, env)
	base := fmt.Sprintf("http://127.0.0.1:%d/", webPort)

	addr := fmt.Sprintf("127.0.0.1:%d", devPort(env))
	cliOut, stderr, code := runNanobot(t, home.Env(addr), "cron", "add", "--name", "water", "--message", "Remind the user to drink water",
		"--every", "3600", "--channel", "cli", "--to", "sub")
	require.Equal(t, 0, code, stderr)
	jobID := jobIDFrom(t, strings.TrimSpace(cliOut))
	temporal, err := client.Dial(client.Options{HostPort: addr, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer temporal.Close()
	paused := func(id string) bool {
		d, err := temporal.ScheduleClient().GetHandle(context.Background(), id).Describe(context.Background())
		require.NoError(t, err)
		return d.Schedule.State.Paused
	}
	cronID := protocol.CronScheduleID(jobID)
	require.False(t, paused(cronID))

	ctx := browserContext(t, chromium, 1280, 860)
	errs := watchConsole(ctx, t)
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		require.NoError(t, chromedp.Do(ctx, actions...), "%s\ngateway:\n%s\n%s", what, out, errOut)
	}
	waitFor := func(what, expr string) {
		t.Helper()
		run(what, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(60*time.Second)))
	}
	card := func(id string) string { return fmt.Sprintf(`.schedule[data-id=%q]`, id) }

	run("open the chat", chromedp.Navigate(base+"?token="+token))
	waitFor("the sidebar links the schedules page", `document.getElementById('schedules-link').getAttribute('href') === 'schedules.html'`)
	run("open the schedules page", chromedp.Navigate(base+"schedules.html"))
	waitFor("the heartbeat and the cron job are listed", fmt.Sprintf(`(() => {
		const hb = document.querySelector('%s'), job = document.querySelector('%s');
		return hb && job && hb.textContent.includes('Heartbeat') && job.textContent.includes('water') &&
			job.querySelector('.act-delete') !== null && hb.querySelector('.act-delete') === null &&
			job.querySelector('.times').textContent.includes('next:');
	})()`, card(protocol.HeartbeatScheduleID), card(cronID)))

	run("pause the job", chromedp.Click(chromedp.CSS(card(cronID)+" .act-pause")))
	waitFor("shown paused", fmt.Sprintf(`document.querySelector('%s .state').textContent === 'paused'`, card(cronID)))
	require.True(t, paused(cronID), "paused in Temporal")
	run("resume the job", chromedp.Click(chromedp.CSS(card(cronID)+" .act-resume")))
	waitFor("shown active", fmt.Sprintf(`document.querySelector('%s .state').textContent === 'active'`, card(cronID)))
	require.False(t, paused(cronID), "resumed in Temporal")

	run("run the heartbeat now", chromedp.Click(chromedp.CSS(card(protocol.HeartbeatScheduleID)+" .act-run")))
	waitFor("its run shows up, linked to its history", fmt.Sprintf(`(() => {
		const r = document.querySelector('%s .run');
		return r !== null && r.querySelector('a') !== null && r.querySelector('a').href.includes('/history') && r.textContent.includes('Completed');
	})()`, card(protocol.HeartbeatScheduleID)))
	shot(t, ctx, "web-schedules.png")
	require.Empty(t, errs.all(), "the page reported errors")

	// The schedules endpoints keep the chat's guard.
	do := func(method, path, body string, header ...string) int {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(header); i += 2 {
			if header[i] == "Host" {
				req.Host = header[i+1]
				continue
			}
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	del := fmt.Sprintf(`{"id":%q,"action":"delete"}`, cronID)
	auth := []string{"Authorization", "Bearer " + token}
	require.Equal(t, http.StatusUnauthorized, do(http.MethodGet, "api/schedules", ""))
	require.Equal(t, http.StatusUnauthorized, do(http.MethodPost, "api/schedule", del))
	require.Equal(t, http.StatusMisdirectedRequest, do(http.MethodPost, "api/schedule", del, append(auth, "Host", fmt.Sprintf("rebound.example:%d", webPort))...))
	require.Equal(t, http.StatusForbidden, do(http.MethodPost, "api/schedule", del, append(auth, "Origin", "http://evil.example")...))
	require.Equal(t, http.StatusBadRequest, do(http.MethodPost, "api/schedule", fmt.Sprintf(`{"id":%q,"action":"delete"}`, protocol.HeartbeatScheduleID), auth...),
		"upkeep schedules follow the config")
	require.False(t, paused(cronID), "the job is still there")
	require.Equal(t, http.StatusOK, do(http.MethodPost, "api/schedule", del, auth...))
	_, err = temporal.ScheduleClient().GetHandle(context.Background(), cronID).Describe(context.Background())
	require.Error(t, err, "deleted in Temporal")
}

// TestWebConsoleApprovalsInbox: a web chat's turn waits on an approval; the
// schedules page's inbox lists it, and Approve there answers it through the
// chat's own path: the call runs once.
func TestWebConsoleApprovalsInbox(t *testing.T) {
	chromium, model, home, base := webApprovalGateway(t)

	resp, err := http.Post(base+"api/send", "application/json", strings.NewReader(`{"chat":"inbox","text":"clean the build"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	ctx := browserContext(t, chromium, 1100, 800)
	errs := watchConsole(ctx, t)
	waitFor := func(what, expr string) { t.Helper(); waitOnPage(t, ctx, what, expr) }
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(base+"schedules.html")))
	waitFor("the waiting request is listed", `(() => {
		const p = document.querySelector('#approvals .pending[data-session="web:inbox"]');
		return p !== null && p.textContent.includes('rm -rf build') && p.querySelector('button.approve') !== null;
	})()`)
	requireNotRun(t, home, model)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#approvals .pending[data-session="web:inbox"] button.approve`))))
	waitFor("nothing waits any more", `document.querySelector('#approvals .none') !== null`)
	require.Eventually(t, func() bool { return model.Count() == 2 }, time.Minute, 50*time.Millisecond, "the turn goes on with the call's result")
	requireRanOnce(t, home, model)
	require.Empty(t, errs.all(), "the page reported errors")
}

// TestWebConsoleSubagents: a turn spawns a subagent that is still at work
// after the turn answered; the schedules page lists it with its label, the
// session that spawned it and where its loop is.
func TestWebConsoleSubagents(t *testing.T) {
	chromium := browser(t)
	model := modeltest.New().Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case !strings.Contains(string(req.Body), "please get a helper"): // the subagent's own loop: busy until the test ends
			return modeltest.Block()
		case last.Role == chat.RoleTool:
			return modeltest.Text("A helper is counting the stars.")
		}
		return modeltest.ToolCalls(modeltest.Call{ID: "sp1", Name: "spawn", Args: `{"task":"count the stars slowly","label":"star counter"}`})
	})
	defer model.Close()
	base, pg, errs := webConsole(t, chromium, model)

	pg.openChat(base, "spawner")
	pg.send("please get a helper")
	pg.waitFor("the turn's answer", `document.getElementById('log').textContent.includes('A helper is counting the stars.')`)
	pg.run("open the schedules page", chromedp.Navigate(base+"schedules.html"))
	pg.waitFor("the subagent at work", `(() => {
		const s = document.querySelector('#subagents .subagent');
		return s !== null && s.querySelector('h3').textContent === 'star counter' && s.textContent.includes('for web:spawner') && s.textContent.includes('RUN');
	})()`)
	shot(t, pg.ctx, "web-subagents.png")
	require.Empty(t, errs.all(), "the page reported errors")
}

// webConsole starts a gateway with the web chat on the embedded Temporal and
// the scripted model, and a Chromium tab on it.
func webConsole(t *testing.T, chromium string, model *modeltest.Server) (base string, pg webPage, errs *consoleErrors) {
	t.Helper()
	_, base, pg, errs = webConsoleHome(t, chromium, model)
	return base, pg, errs
}

// webConsoleHome is webConsole with the home it runs on.
func webConsoleHome(t *testing.T, chromium string, model *modeltest.Server) (home *testenv.Home, base string, pg webPage, errs *consoleErrors) {
	t.Helper()
	webPort := testenv.FreePort(t)
	home = testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"web": map[string]any{"port": webPort}}})
	env, _ := embeddedEnv(t, home)
	base, out, errOut := startWebGateway(t, env)
	pg, errs = newWebPage(t, chromium, 1100, 800, out, errOut)
	return home, base, pg, errs
}
