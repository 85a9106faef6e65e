package integration

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/session"
)

// TestWebConsoleOnAPhoneAndALongSession: on a phone-sized screen the sidebar
// is a drawer; a 2,000-message session opens on its newest page and loads
// older ones as the reader scrolls up, never the whole session at once; on
// a desktop the keyboard shortcuts search, switch and start chats.
func TestWebConsoleOnAPhoneAndALongSession(t *testing.T) {
	chromium := browser(t)
	model := modeltest.New(modeltest.Text("Answered on the phone."))
	defer model.Close()
	webPort := testenv.FreePort(t)
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"web": map[string]any{"port": webPort}}})
	store, err := session.NewJSONLStore(session.SessionsDir(filepath.Dir(home.ConfigPath), home.Workspace), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	long := make([]chat.Message, 0, 2000)
	for i := range 1000 {
		turn := fmt.Sprintf("t%d", i)
		long = append(long, chat.Message{Role: chat.RoleUser, Content: fmt.Sprintf("question %d.", i), Turn: turn, EntryID: "u"},
			chat.Message{Role: chat.RoleAssistant, Content: fmt.Sprintf("answer %d.", i), Turn: turn, EntryID: "a"})
	}
	_, err = store.Append(context.Background(), "web:other", chat.Message{Role: chat.RoleUser, Content: "another chat", Turn: "o", EntryID: "u"})
	require.NoError(t, err)
	_, err = store.Append(context.Background(), "web:long", long...)
	require.NoError(t, err)
	env, _ := embeddedEnv(t, home)
	base, out, errOut := startWebGateway(t, env)

	pg, errs := newWebPage(t, chromium, 390, 844, out, errOut)
	ctx := pg.ctx
	run, waitFor, send := pg.run, pg.waitFor, pg.send
	drawn := `document.querySelectorAll('#log .msg').length`
	asideIn := `document.querySelector('aside').getBoundingClientRect().left >= 0`

	run("open the long session on a phone", chromedp.Navigate(base+"#long"))
	waitFor("its newest page, not all of it", `document.getElementById('log').textContent.includes('answer 999.') && `+drawn+` <= 110 &&
		!document.getElementById('log').textContent.includes('question 0.')`)
	waitFor("the context meter", `document.querySelector('#meter .used').textContent.startsWith('context ')`)
	waitFor("the sidebar is a closed drawer", `!(`+asideIn+`) && getComputedStyle(document.getElementById('menu')).display !== 'none'`)
	shot(t, ctx, "web-phone.png")
	run("open the drawer", chromedp.Click(chromedp.CSS("#menu")))
	waitFor("the drawer is in", asideIn+` && document.querySelector('#sessions li[data-key="web:other"]') !== null`)
	shot(t, ctx, "web-phone-drawer.png")
	run("pick the other chat", chromedp.Click(chromedp.CSS(`#sessions li[data-key="web:other"]`)))
	waitFor("it opens and the drawer closes", `document.getElementById('title').textContent === 'web:other' && document.querySelector('aside').getBoundingClientRect().right <= 0`)
	run("back to the long one", chromedp.Click(chromedp.CSS("#menu")))
	waitFor("the drawer is in again", asideIn)
	run("pick it", chromedp.Click(chromedp.CSS(`#sessions li[data-key="web:long"]`)))
	waitFor("the long session again", `document.getElementById('log').textContent.includes('answer 999.') && `+drawn+` <= 110`)

	waitFor("scrolling up pages back to the first question", `(() => {
		const log = document.getElementById('log'); log.scrollTop = 0;
		return log.textContent.includes('question 0.');
	})()`)
	waitFor("every message once, in order", `(() => {
		const m = [...document.querySelectorAll('#log .msg')];
		return m.length === 2000 && m[0].textContent.startsWith('question 0.') && m[1999].textContent.startsWith('answer 999.') &&
			m.every((e, i) => e.textContent.startsWith((i % 2 ? 'answer ' : 'question ') + Math.floor(i / 2) + '.'));
	})()`)
	send("hello from the phone")
	waitFor("the answer", `document.getElementById('log').textContent.includes('Answered on the phone.')`)
	require.Empty(t, errs.all(), "the page reported errors")

	// A desktop: the keyboard shortcuts.
	dp, deskErrs := newWebPage(t, chromium, 1280, 860, out, errOut)
	key := func(what, keys string, mods ...chromedp.Modifier) {
		t.Helper()
		dp.run(what, chromedp.KeyEvent(keys, chromedp.KeyModifiers(mods...)))
	}
	title := `document.getElementById('title').textContent`
	dp.run("open the long session", chromedp.Navigate(base+"#long"))
	dp.waitFor("ready, the sidebar listed", title+` === 'web:long' && document.querySelectorAll('#sessions li').length === 2`)
	key("Ctrl+K", "k", chromedp.ModifierCtrl)
	dp.waitFor("the search has the cursor", `document.activeElement.id === 'search'`)
	key("Escape", kb.Escape)
	dp.waitFor("back to the message box", `document.activeElement.id === 'text'`)
	key("Alt+↓", kb.ArrowDown, chromedp.ModifierAlt)
	dp.waitFor("the next chat", title+` === 'web:other'`)
	key("Alt+↑", kb.ArrowUp, chromedp.ModifierAlt)
	dp.waitFor("the previous chat", title+` === 'web:long'`)
	dp.run("leave the box", chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`))
	key("/", "/")
	dp.waitFor("/ puts the cursor in the message box", `document.activeElement.id === 'text'`)
	dp.run("clear the box", chromedp.Evaluate[chromedp.Void](`document.getElementById('text').value = ''`)) // CDP types its char event after keydown was prevented
	key("Alt+N", "n", chromedp.ModifierAlt)
	dp.waitFor("a new session", `/^web:[0-9a-f]{12}$/.test(`+title+`) && document.getElementById('log').children.length === 0`)
	require.Empty(t, deskErrs.all(), "the page reported errors")
}
