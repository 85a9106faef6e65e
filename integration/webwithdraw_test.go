package integration

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// TestWebWithdrawQueuedMessage: while a turn waits for approval, two more
// messages queue behind it; cancel on one takes it back from the turn (its
// withdraw update). It leaves the page and the queue, stays gone after a
// reload, and once the turn goes on the model reads only the other one,
// which alone is answered; the withdrawn one reaches no model call.
func TestWebWithdrawQueuedMessage(t *testing.T) {
	chromium := browser(t)
	webPort := testenv.FreePort(t)
	dev, model, _, env := approvalSetup(t, map[string]any{"channels": map[string]any{"web": map[string]any{"enabled": true, "port": webPort}}})
	_, out, errOut := startGateway(t, dev, env)
	base := fmt.Sprintf("http://127.0.0.1:%d/", webPort)
	scriptRiskyClean(model, "Cleaned the build.")

	pg, errs := newWebPage(t, chromium, 1200, 860, out, errOut)
	run, waitFor, send := pg.run, pg.waitFor, pg.send
	live := `document.getElementById('live')`
	userMsg := func(text string) string {
		return `[...document.querySelectorAll('#log .msg.user')].find(m => m.textContent.startsWith('` + text + `'))`
	}
	const keep, drop = "then tidy the docs", "and delete the logs"

	pg.openChat(base, "withdraw")
	send("clean the build")
	waitFor("the turn waits for approval", live+`.textContent.includes('waiting for approval since')`)
	send(keep)
	send(drop)
	queuedWithCancel := func(text string) string {
		return `((m) => m && m.dataset.id && m.querySelector('.tag').textContent === 'queued behind a turn of this session' &&
			m.querySelector('button.withdraw') !== null)(` + userMsg(text) + `)`
	}
	waitFor("both messages queued, each with its cancel button", queuedWithCancel(keep)+` && `+queuedWithCancel(drop))
	dropID, ownID := evalString(t, pg, userMsg(drop)+`.dataset.id`), evalString(t, pg, userMsg("clean the build")+`.dataset.id`)
	shot(t, pg.ctx, "web-queued-cancel.png")

	run("cancel "+drop, chromedp.Evaluate[chromedp.Void](userMsg(drop)+`.querySelector('button.withdraw').click()`))
	waitFor("the withdrawn message gone from the transcript", userMsg(drop)+` === undefined`)
	waitFor("the turn's queue without it, the other still queued", `document.getElementById('log').textContent.includes('`+keep+`') &&
		!`+live+`.textContent.includes('`+drop+`') && `+userMsg(keep)+`.querySelector('button.withdraw') !== null`)

	run("reload", chromedp.Reload())
	waitFor("after a reload the turn's query lists only the other", live+`.textContent.includes('queued behind a turn of this session: `+keep+`cancel') &&
		document.querySelector('.approval button.approve') !== null`)
	require.NotContains(t, evalString(t, pg, `document.body.innerText`), drop, "a reload does not bring it back")
	require.Equal(t, 1, model.Count(), "the model waits with the turn")
	require.Equal(t, http.StatusConflict, withdrawStatus(t, base, ownID), "the turn's own message is taken: it will be answered")
	require.Equal(t, http.StatusNotFound, withdrawStatus(t, base, dropID), "withdrawn once")

	pg.pressApprove()
	waitFor("the turn's answer", `document.getElementById('log').textContent.includes('Cleaned the build.')`)
	waitFor("nothing running", live+`.hidden`)
	require.Equal(t, 2, model.Count(), "one turn: the call, then the answer with the injected message")
	require.Contains(t, string(model.Requests()[1].Body), keep, "the message left queued reached the model")
	for i, r := range model.Requests() {
		require.NotContains(t, string(r.Body), drop, "model request %d saw the withdrawn message", i)
	}

	require.Equal(t, http.StatusNotFound, withdrawStatus(t, base, dropID), "no turn runs: nothing is queued")
	testenv.RecordHistory(t, dev.Client, protocol.TurnWorkflowID("web:withdraw"), "", "turn_withdraw")

	run("reload after the turn", chromedp.Reload())
	waitFor("the conversation from the journal", `document.getElementById('log').textContent.includes('Cleaned the build.')`)
	require.NotContains(t, evalString(t, pg, `document.getElementById('log').textContent`), drop, "never journaled, never answered")
	require.Empty(t, errs.all(), "the page reported errors")
}

// evalString evaluates expr on the page.
func evalString(t *testing.T, pg webPage, expr string) string {
	t.Helper()
	s, err := chromedp.Run(pg.ctx, chromedp.Evaluate[string](expr))
	require.NoError(t, err)
	return s
}

// withdrawStatus asks the gateway of the web chat "withdraw" to withdraw id, as the page does.
func withdrawStatus(t *testing.T, base, id string) int {
	t.Helper()
	resp, err := http.Post(base+"api/withdraw", "application/json", strings.NewReader(`{"chat":"withdraw","id":"`+id+`"}`))
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}
