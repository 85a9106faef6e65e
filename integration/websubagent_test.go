package integration

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestWebConsoleSubagentCard: a web chat's turn spawns a subagent whose
// model call is held; under the turn's answer the spawn call's card shows
// the subagent (label, task) running; once the call is released the same
// card, on the same page, shows it done with its result.
func TestWebConsoleSubagentCard(t *testing.T) {
	chromium := browser(t)
	m := &subagentModel{subStep: func(int) modeltest.Step { return modeltest.Block().Text("There are 3 files.") }}
	model := modeltest.New().Handle(m.handle)
	defer model.Close()
	base, pg, errs := webConsole(t, chromium, model)
	card := `document.querySelector('.turn-details .tool-card[data-tool="spawn"] .subagent-card')`

	pg.openChat(base, "helper")
	pg.send("count my files")
	pg.waitFor("the turn's answer", `document.getElementById('log').textContent.includes("I've started a helper on it.")`)
	require.Eventually(t, func() bool { return model.Waiting() == 1 }, time.Minute, 50*time.Millisecond, "the subagent's model call is held")
	answer := `[...document.querySelectorAll('.msg.assistant')].find((m) => m.textContent.includes("I've started a helper on it."))`
	pg.waitFor("what the turn did, under its answer", answer+`?.querySelector('.turn-details summary') != null`)
	pg.run("open it", chromedp.Evaluate[chromedp.Void](`(() => {
		`+answer+`.querySelector('.turn-details summary').click();
		window.notReloaded = true;
	})()`))
	pg.waitFor("the spawn call's card shows its subagent running", `(() => {
		const c = `+card+`;
		return c !== null && c.classList.contains('running') && c.querySelector('.subagent-head').textContent.startsWith('subagent files · running') &&
			c.querySelector('.subagent-task').textContent === 'count the files in the workspace' && c.querySelector('.subagent-result').hidden;
	})()`)
	shot(t, pg.ctx, "web-subagent-running.png")

	model.Release()
	pg.waitFor("the same card shows it done with its result, without a reload", `(() => {
		const c = `+card+`;
		return window.notReloaded === true && c !== null && c.classList.contains('done') &&
			c.querySelector('.subagent-state').textContent === 'done' && c.querySelector('.subagent-result').textContent === 'There are 3 files.' &&
			c.querySelector('a.inspect')?.href.includes('subagent') === true;
	})()`)
	shot(t, pg.ctx, "web-subagent-done.png")
	pg.waitFor("the announced result answered in the chat", `document.getElementById('log').textContent.includes('Your helper reported back.')`)
	require.Empty(t, errs.all(), "the page reported errors")
}
