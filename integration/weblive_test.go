package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestWebConsoleLive: the page shows where the running turn is, pushed as it
// changes: a model call Temporal retries (attempt n of 5, next in s), a turn
// waiting for approval since a time, a message queued behind it — and after
// a reload, from the turn's query, the queued message it has not drawn.
func TestWebConsoleLive(t *testing.T) {
	chromium := browser(t)
	webPort := testenv.FreePort(t)
	dev, model, home, env := approvalSetup(t, map[string]any{"channels": map[string]any{"web": map[string]any{"enabled": true, "port": webPort}}})
	_, out, errOut := startGateway(t, dev, env)
	base := fmt.Sprintf("http://127.0.0.1:%d/", webPort)
	down := modeltest.Error(500, "server_error", "upstream is down")
	model.Script(down, down, down, modeltest.Text("Recovered after three failures."))
	scriptRiskyClean(model, "Cleaned the build.")

	pg, errs := newWebPage(t, chromium, 1200, 860, out, errOut)
	ctx := pg.ctx
	run, waitFor, send := pg.run, pg.waitFor, pg.send
	live := `document.getElementById('live')`

	pg.openChat(base, "live")
	send("are you there?")
	waitFor("the retry shown with its attempt and countdown", live+`.textContent.match(/retrying the model call, attempt [2-4] of 5, next in \d+ s/) !== null &&
		`+live+`.textContent.includes('upstream is down')`)
	shot(t, ctx, "web-live-retry.png")
	waitFor("the answer after the retries", `document.getElementById('log').textContent.includes('Recovered after three failures.')`)
	require.Equal(t, 4, model.Count(), "three failed attempts and the one that answered")
	waitFor("the live panel gone with the turn", live+`.hidden`)

	send("clean the build")
	waitFor("the wait for approval, since when", live+`.textContent.match(/waiting for approval since \d{1,2}:\d\d:\d\d.*: exec/) !== null`)
	send("then tidy the docs")
	waitFor("the message queued behind the turn", `[...document.querySelectorAll('.msg.user .tag')].some(t => t.textContent === 'queued behind a turn of this session')`)
	require.DirExists(t, filepath.Join(home.Workspace, "build"), "the call waits for its answer")
	require.Equal(t, 5, model.Count(), "the model waits with the turn")

	run("reload", chromedp.Reload())
	waitFor("after a reload the queued message comes from the turn's query", live+`.textContent.includes('queued behind a turn of this session: then tidy the docs') &&
		`+live+`.textContent.includes('waiting for approval since') && document.querySelector('.approval button.approve') !== null`)
	shot(t, ctx, "web-live-approval.png")
	pg.pressApprove()
	waitFor("the turn's answer", `document.getElementById('log').textContent.includes('Cleaned the build.')`)
	waitFor("nothing running", live+`.hidden`)
	run("open what the turn did", chromedp.Click(chromedp.CSS(".msg.assistant:last-of-type .turn-details summary")))
	waitFor("who answered the approval, and when", `[...document.querySelectorAll('.turn-details .approval-answer')].some(a =>
		/^approval [0-9a-f]+: approve by \S+ at \d{1,2}:\d\d:\d\d/.test(a.textContent))`)
	shot(t, ctx, "web-approval-answered.png")
	require.Contains(t, string(model.Requests()[5].Body), "then tidy the docs", "the queued message reached the model with the call's result")
	ran, err := os.ReadFile(filepath.Join(home.Workspace, "ran.txt"))
	require.NoError(t, err)
	require.Equal(t, "ran\n", string(ran), "the approved call ran once")
	require.Empty(t, errs.all(), "the page reported errors")
}
