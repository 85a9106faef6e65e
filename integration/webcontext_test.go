package integration

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestWebConsoleContextAndMemory: the chat shows the session's context meter
// (what its history costs of the budget, and what compaction does next),
// growing as the conversation does; the memory page shows MEMORY.md, USER.md
// and SOUL.md read-only and Dream's last change as a diff.
func TestWebConsoleContextAndMemory(t *testing.T) {
	chromium := browser(t)
	model := modeltest.New(modeltest.Text("Noted: you like green tea."), modeltest.Text("A long answer. "+strings.Repeat("Once upon a time there was a teapot. ", 60)))
	defer model.Close()
	webPort := testenv.FreePort(t)
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"web": map[string]any{"port": webPort}}})
	testenv.DreamLearned(t, home.Workspace) // what two Dream runs leave: the files and their commits

	env, _ := embeddedEnv(t, home)
	base, out, errOut := startWebGateway(t, env)
	pg, errs := newWebPage(t, chromium, 1200, 860, out, errOut)
	ctx := pg.ctx
	run, waitFor, send := pg.run, pg.waitFor, pg.send
	used := func() int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`Number(document.querySelector('#meter .used').textContent.match(/context ([\d,]+) \//)[1].replace(/,/g, ''))`))
		require.NoError(t, err)
		return n
	}

	run("open the chat", chromedp.Navigate(base+"#meter"))
	waitFor("an empty session's meter", `!document.getElementById('meter').hidden && document.querySelector('#meter .used').textContent.startsWith('context 0 / ')`)
	send("remember that I like green tea")
	waitFor("the answer", `document.getElementById('log').textContent.includes('Noted: you like green tea.')`)
	waitFor("the meter counts the turn", `!document.querySelector('#meter .used').textContent.startsWith('context 0 / ')`)
	first := used()
	send("tell me a long story")
	waitFor("the long answer", `document.getElementById('log').textContent.includes('A long answer.')`)
	waitFor("the meter grows with it", `Number(document.querySelector('#meter .used').textContent.match(/context ([\d,]+) \//)[1].replace(/,/g, '')) > `+strconv.Itoa(first+250))
	run("open the meter", chromedp.Click(chromedp.CSS("#meter summary")))
	waitFor("what compaction does next", `document.querySelector('#meter .why').textContent.includes('tokens a turn first archives the oldest turns into memory, down to about') &&
		document.querySelector('#meter .why').textContent.includes('nothing for idle compaction')`)
	shot(t, ctx, "web-context-meter.png")

	run("reload", chromedp.Reload())
	waitFor("the meter after a reload", `document.querySelector('#meter .used').textContent.match(/context [\d,]+ \//) !== null`)
	require.GreaterOrEqual(t, used(), first+250, "measured from the journal, not the page")

	waitFor("the sidebar links the memory page", `document.getElementById('memory-link').getAttribute('href') === 'memory.html'`)
	run("open the memory page", chromedp.Navigate(base+"memory.html"))
	waitFor("the memory files and Dream's diff", `(() => {
		const mem = document.querySelector('.memory-file[data-name="MEMORY.md"] pre'), soul = document.querySelector('.memory-file[data-name="SOUL.md"] summary');
		const add = [...document.querySelectorAll('#dream pre.diff .add')].map(e => e.textContent);
		const del = [...document.querySelectorAll('#dream pre.diff .del')].map(e => e.textContent);
		return mem && mem.textContent.includes('likes green tea') && soul && soul.textContent.includes('not written yet') &&
			add.some(l => l.includes('+- likes green tea')) && del.some(l => l.includes('-- likes tea')) &&
			document.querySelector('#dream .dream-head').textContent.includes('memory/MEMORY.md');
	})()`)
	shot(t, ctx, "web-memory.png")
	require.Empty(t, errs.all(), "the page reported errors")
}
