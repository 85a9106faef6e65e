package integration

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestWebConsoleGoals: /goal in a web chat lets the model create a goal;
// while the agent is still at it (its next model call held) the schedules
// page lists the goal as active with its objective, its chat and its run;
// once the model completes it the page shows it complete, without a reload,
// and its link opens the chat with the final answer.
func TestWebConsoleGoals(t *testing.T) {
	chromium := browser(t)
	model := modeltest.New(
		modeltest.ToolCalls(modeltest.Call{ID: "g1", Name: "create_goal", Args: `{"objective":"three notes exist","ui_summary":"write notes"}`}),
		modeltest.Text("I wrote the first note."),
		modeltest.Block().ToolCalls(modeltest.Call{ID: "g2", Name: "update_goal", Args: `{"action":"complete"}`}),
		modeltest.Text("All three notes are written."),
	)
	defer model.Close()
	base, pg, errs := webConsole(t, chromium, model)
	goal := `document.querySelector('#goals .goal[data-session="web:goals"]')`

	pg.openChat(base, "goals")
	pg.send("/goal write three notes")
	pg.waitFor("the first round's answer", `document.getElementById('log').textContent.includes('I wrote the first note.')`)
	pg.run("open the schedules page", chromedp.Navigate(base+"schedules.html"))
	pg.waitFor("the goal listed as active, with its chat and its run", `(() => {
		const g = `+goal+`;
		return g !== null && g.querySelector('h3').textContent.startsWith('write notes') && g.querySelector('.state').textContent === 'active' &&
			g.querySelector('.objective').textContent === 'three notes exist' && g.textContent.includes('since') &&
			g.querySelector('a.session')?.getAttribute('href') === '/#goals' && g.querySelector('a.inspect')?.href.includes('/history') === true;
	})()`)
	require.Eventually(t, func() bool { return model.Waiting() == 1 }, time.Minute, 50*time.Millisecond, "the agent is still at it: its next model call is held")
	shot(t, pg.ctx, "web-goals.png")

	model.Release()
	pg.waitFor("the goal shown complete", goal+`?.querySelector('.state').textContent === 'complete'`)
	link, err := chromedp.Run(pg.ctx, chromedp.Evaluate[string](goal+`.querySelector('a.session').href`))
	require.NoError(t, err)
	pg.run("follow its link to the chat", chromedp.Navigate(link))
	pg.waitFor("the chat with the final answer", `document.getElementById('title').textContent === 'web:goals' &&
		document.getElementById('log').textContent.includes('All three notes are written.')`)
	require.Equal(t, 4, model.Count())
	require.Empty(t, errs.all(), "the page reported errors")
}
