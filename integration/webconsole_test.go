package integration

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/session"
)

// TestWebConsoleSidebarSearchAndFork drives the console's sidebar in
// Chromium through the real gateway on temporal-dev: the chats of two
// channels listed by channel, a search by text, another channel's chat
// opened read-only and forked into a web chat that keeps its history up to
// the message; the new endpoints refuse a missing token and a foreign Host.
func TestWebConsoleSidebarSearchAndFork(t *testing.T) {
	chromium := browser(t)
	model := modeltest.New(
		modeltest.ToolCalls(modeltest.Call{ID: "call_echo", Name: "exec", Args: `{"command":"echo striped"}`}),
		modeltest.Text("Zebras have **stripes**."))
	defer model.Close()
	webPort := testenv.FreePort(t)
	const token = "t0k3n-console"
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"web": map[string]any{"port": webPort, "token": token}}})
	env, _ := embeddedEnv(t, home)
	chatURL, out, errOut := startWebGateway(t, env)
	base := fmt.Sprintf("http://127.0.0.1:%d/", webPort)
	require.Equal(t, base+"?token="+token, chatURL)

	// A Telegram chat in the same journal (the gateway has no Telegram bot here; its journal is what the sidebar reads).
	store, err := session.NewJSONLStore(session.SessionsDir(filepath.Dir(home.ConfigPath), home.Workspace), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	_, err = store.Append(context.Background(), "telegram:4242",
		chat.Message{Role: chat.RoleUser, Content: "the giraffe question", Turn: "tg1", EntryID: "u"},
		chat.Message{Role: chat.RoleAssistant, Content: "Giraffes are tall.", Turn: "tg1", EntryID: "a"},
		chat.Message{Role: chat.RoleUser, Content: "and okapis?", Turn: "tg2", EntryID: "u"},
		chat.Message{Role: chat.RoleAssistant, Content: "Okapis are their cousins.", Turn: "tg2", EntryID: "a"})
	require.NoError(t, err)

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

	run("open the page", chromedp.Navigate(chatURL))
	waitFor("page ready", `document.getElementById('title').textContent.startsWith('web:')`)
	run("ask", chromedp.SetValue(chromedp.CSS("#text"), "tell me about zebras"), chromedp.Click(chromedp.CSS("#send")))
	waitFor("the answer", `[...document.querySelectorAll('.msg.assistant strong')].some(e => e.textContent === 'stripes')`)

	waitFor("the live messages get their fork buttons once journaled", `document.querySelector('#log > .msg.user > .fork') !== null &&
		document.querySelector('#log > .msg.assistant > .fork') !== null`)
	// What the turn did, under the answer: collapsed, then states, the model calls and the tool's card.
	waitFor("collapsed turn details", `document.querySelector('.msg.assistant .turn-details') !== null && !document.querySelector('.msg.assistant .turn-details').open`)
	run("open the turn's details", chromedp.Click(chromedp.CSS(".msg.assistant .turn-details summary")))
	waitFor("the tool card", `(() => {
		const d = document.querySelector('.msg.assistant .turn-details'), card = d.querySelector('.tool-card[data-tool="exec"]');
		return card && card.querySelector('.tool-args').textContent.includes('echo striped') &&
			card.querySelector('.tool-result').textContent.includes('striped') && card.querySelector('.tool-head').textContent.includes('exit 0') &&
			d.querySelectorAll('.model-call').length === 2 && d.querySelector('.model-call').textContent.includes('test-model') &&
			d.querySelector('.states .state') !== null && d.querySelector('a.inspect').href.includes('/history');
	})()`)

	waitFor("two channels in the sidebar", `(() => {
		const web = document.querySelector('#sessions ul[data-channel="web"]'), tg = document.querySelector('#sessions ul[data-channel="telegram"]');
		return web && tg && [...web.querySelectorAll('li')].some(li => li.textContent === 'tell me about zebras') &&
			[...tg.querySelectorAll('li')].some(li => li.textContent === 'the giraffe question');
	})()`)
	shot(t, ctx, "web-sidebar-and-turn.png")

	run("search", chromedp.SendKeys(chromedp.CSS("#search"), "okapi"))
	waitFor("the search found the Telegram chat only", `(() => {
		const li = [...document.querySelectorAll('#sessions li')];
		return li.length === 1 && li[0].dataset.key === 'telegram:4242' && li[0].querySelector('.found').textContent.includes('Okapis are their cousins.');
	})()`)

	run("open the Telegram chat", chromedp.Click(chromedp.CSS(`#sessions li[data-key="telegram:4242"]`)))
	waitFor("read-only", `document.getElementById('input').hidden && document.getElementById('log').textContent.includes('Giraffes are tall.')`)
	run("fork at the first answer", chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll('.msg.assistant')].find(m => m.textContent.includes('Giraffes are tall.')).querySelector('.fork').click(); true`))
	waitFor("the fork is a web chat with the history up to there", `(() => {
		const log = document.getElementById('log').textContent;
		return document.getElementById('title').textContent.startsWith('web:') && !document.getElementById('input').hidden &&
			log.includes('the giraffe question') && log.includes('Giraffes are tall.') && !log.toLowerCase().includes('okapi');
	})()`)
	run("rename the fork", chromedp.Click(chromedp.CSS("#rename")), chromedp.SendKeys(chromedp.CSS(".rename-to"), "Giraffe fork\r"))
	waitFor("renamed in the sidebar", `[...document.querySelectorAll('#sessions ul[data-channel="web"] li')].some(li => li.textContent === 'Giraffe fork')`)
	run("archive it", chromedp.Click(chromedp.CSS("#archive")))
	waitFor("gone from the list", `document.querySelector('#sessions ul[data-channel="web"] li') !== null &&
		![...document.querySelectorAll('#sessions li')].some(li => li.textContent === 'Giraffe fork')`)
	run("show the archived", chromedp.Click(chromedp.CSS("#show-archived")))
	waitFor("listed as archived", `[...document.querySelectorAll('#sessions li')].map(li => li.textContent).join('|') === 'Giraffe fork'`)

	orig, err := store.Load(context.Background(), "telegram:4242")
	require.NoError(t, err)
	require.Len(t, orig.Messages, 4, "the forked chat is untouched")
	require.Empty(t, errs.all(), "the page reported errors")

	// The new endpoints keep the chat's guard: no token, or a foreign Host (DNS rebinding), gets nothing.
	for _, r := range []struct{ method, path, body string }{
		{http.MethodGet, "api/sessions?q=giraffe", ""},
		{http.MethodGet, "api/history?session=telegram:4242", ""},
		{http.MethodPost, "api/fork", `{"session":"telegram:4242","index":1}`},
		{http.MethodGet, "api/turn?session=telegram:4242&turn=00000000-0000-0000-0000-000000000000", ""},
		{http.MethodPost, "api/session", `{"session":"telegram:4242","archived":true}`},
	} {
		req, err := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "no token: %s", r.path)

		req, err = http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
		require.NoError(t, err)
		req.Host = fmt.Sprintf("rebound.example:%d", webPort)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err = http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode, "foreign Host: %s", r.path)
	}
}
