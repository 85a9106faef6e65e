package integration

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/session"
)

// TestWebTemporaryChat: in Chromium through the real gateway on
// temporal-dev, "Temporary chat" opens a chat that answers like any other
// but offers no goals, subagents or cron, is marked temporary, never shows
// in the sidebar, and is deleted when the page is reloaded (left).
func TestWebTemporaryChat(t *testing.T) {
	chromium := browser(t)
	var mu sync.Mutex
	offered := map[string][]string{}
	model := modeltest.New().Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		user := lastOf(req, chat.RoleUser).Content
		line, _, _ := strings.Cut(user, "\n")
		var names []string
		for _, d := range req.Tools {
			names = append(names, d.Name)
		}
		mu.Lock()
		offered[line] = names
		mu.Unlock()
		return modeltest.Text("Noted: " + line)
	})
	defer model.Close()
	home, base, pg, errs := webConsoleHome(t, chromium, model)
	store, err := session.NewJSONLStore(session.SessionsDir(filepath.Dir(home.ConfigPath), home.Workspace), nil)
	require.NoError(t, err)

	pg.openChat(base, "keep")
	pg.send("a chat that stays")
	pg.waitFor("the kept chat's answer", `document.getElementById('log').textContent.includes('Noted: a chat that stays')`)
	pg.run("open a temporary chat", chromedp.Click(chromedp.CSS("#temporary")))
	pg.waitFor("a temporary chat, marked", `document.getElementById('title').textContent.startsWith('web:tmp-') &&
		!document.getElementById('temp-badge').hidden && document.getElementById('rename').hidden`)
	pg.send("my temporary secret")
	pg.waitFor("its answer", `document.getElementById('log').textContent.includes('Noted: my temporary secret')`)
	title, err := chromedp.Run(pg.ctx, chromedp.Evaluate[string](`document.getElementById('title').textContent`))
	require.NoError(t, err)
	key := strings.TrimSpace(title)
	require.True(t, strings.HasPrefix(key, "web:tmp-"), key)
	require.Eventually(t, func() bool {
		s, err := store.Load(context.Background(), key)
		return err == nil && s.Kind == string(protocol.TemporaryTurn)
	}, time.Minute, 50*time.Millisecond, "the session is marked temporary")
	mu.Lock()
	tools := offered["my temporary secret"]
	mu.Unlock()
	require.Contains(t, tools, "read_file")
	for _, gone := range protocol.TemporaryDisabledTools {
		require.NotContains(t, tools, gone)
	}
	require.Contains(t, offered["a chat that stays"], "spawn", "an ordinary chat keeps them")

	_, err = chromedp.Run(pg.ctx, chromedp.Evaluate[any](`loadSessions(), true`))
	require.NoError(t, err)
	pg.waitFor("the kept chat listed, not the temporary one", `(() => {
		const items = [...document.querySelectorAll('#sessions li')].map((li) => li.dataset.key);
		return items.includes('web:keep') && !items.some((k) => k.startsWith('web:tmp-'));
	})()`)

	pg.run("reload the page (leaving the chat)", chromedp.Reload())
	pg.waitFor("the page back on the kept chat", `document.getElementById('title').textContent === 'web:keep'`)
	require.Eventually(t, func() bool {
		_, err := os.Stat(store.Path(key))
		return os.IsNotExist(err)
	}, time.Minute, 50*time.Millisecond, "the temporary chat's session is deleted")
	infos, err := store.Sessions()
	require.NoError(t, err)
	require.False(t, slices.ContainsFunc(infos, func(i session.Info) bool { return i.Key == key }))
	require.Empty(t, errs.all(), "the page reported errors")
}
