package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/peer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// browser finds a Chromium the e2e step (make chromium) may have installed.
func browser(t *testing.T) string {
	t.Helper()
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(b); err == nil {
			peer.Used(t, peer.Chromium)
			return p
		}
	}
	peer.Missing(t, peer.Chromium, "no Chromium on PATH: run make chromium (e2e/chromium.sh), or apt-get install chromium")
	return ""
}

// browserContext is a headless Chromium tab of that size, closed when the test ends.
func browserContext(t *testing.T, chromium string, width, height int) context.Context {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.WindowSize(width, height))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	return ctx
}

// consoleErrors collects what the page reports as errors.
type consoleErrors struct {
	mu   sync.Mutex
	list []string
}

func (c *consoleErrors) add(s string) { c.mu.Lock(); c.list = append(c.list, s); c.mu.Unlock() }
func (c *consoleErrors) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.list...)
}

// TestWebChatInABrowserEndToEnd is the newcomer's path: a gateway on the
// embedded Temporal, its chat page in headless Chromium, the scripted model at the wire.
// watchConsole starts the browser of ctx and collects the errors its pages report.
func watchConsole(ctx context.Context, t *testing.T) *consoleErrors {
	t.Helper()
	errs := &consoleErrors{}
	// The first call starts the browser, on a context without a deadline (it would stop the browser).
	require.NoError(t, chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			errs.add(fmt.Sprintf("exception: %s %s", ev.ExceptionDetails.Text, ev.ExceptionDetails.URL))
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				errs.add(fmt.Sprintf("console.error %d args", len(ev.Args)))
			}
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.EntryLevelError {
				errs.add("log: " + ev.Entry.Text + " " + ev.Entry.URL)
			}
		}
	}))
	return errs
}

// startWebGateway starts `nanobot gateway` on env and waits for the chat URL it prints.
func startWebGateway(t *testing.T, env []string) (chatURL string, out, errOut *testenv.SyncBuffer) {
	t.Helper()
	_, out, errOut = startNanobot(t, env, "gateway")
	chatLine := regexp.MustCompile(`Chat:\s+(http://\S+)`)
	require.Eventually(t, func() bool {
		return chatLine.MatchString(out.String()) && strings.Contains(out.String(), "Press Ctrl-C")
	}, 2*time.Minute, 100*time.Millisecond, "gateway did not print the chat URL:\n%s\n%s", out, errOut)
	return chatLine.FindStringSubmatch(out.String())[1], out, errOut
}

func TestWebChatInABrowserEndToEnd(t *testing.T) {
	chromium := browser(t)
	model := modeltest.New(
		modeltest.Text("Hello from **nanobot**, streamed in pieces.").ChunkDelay(30*time.Millisecond),
		modeltest.ToolCalls(modeltest.Call{ID: "call_slow", Name: "exec", Args: `{"command":"sleep 4"}`}),
		modeltest.Text("Done. I also saw your note.\n\n| tool | took |\n|---|---|\n| exec | 4 s |\n\n[docs](https://example.org) <b>raw</b>\n\n```sh\nsleep 4\n```"),
		modeltest.Block(),
	)
	defer model.Close()
	webPort := testenv.FreePort(t)
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"web": map[string]any{"port": webPort}}})
	env, uiPort := embeddedEnv(t, home) // the newcomer's setup: the gateway starts temporal-dev itself
	chatURL, out, errOut := startWebGateway(t, env)
	require.Equal(t, fmt.Sprintf("http://127.0.0.1:%d/", webPort), chatURL)
	require.Contains(t, out.String(), fmt.Sprintf("Web UI:   http://127.0.0.1:%d", uiPort))

	shots := os.Getenv("NANOBOT_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(shots, 0o755))
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
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		require.NoError(t, err)
		p := filepath.Join(shots, name)
		require.NoError(t, os.WriteFile(p, png, 0o644))
		t.Logf("screenshot: %s", p)
	}
	send := func(text string) {
		t.Helper()
		run("send "+text, chromedp.SetValue(chromedp.CSS("#text"), text), chromedp.Click(chromedp.CSS("#send")))
	}

	run("open the page", chromedp.Navigate(chatURL))
	waitFor("page ready", `document.getElementById('title').textContent.startsWith('web:')`)
	// Watch the reply bubble while it streams: it must be seen partly written.
	run("watch the stream", chromedp.Evaluate[chromedp.Void](`window.seen = []; new MutationObserver(() => {
		const s = document.querySelector('.msg.assistant.streaming'); if (s) window.seen.push(s.textContent);
	}).observe(document.getElementById('log'), {subtree: true, childList: true, characterData: true}); true`))

	send("hello")
	waitFor("the streamed reply", `[...document.querySelectorAll('.msg.assistant strong')].some(e => e.textContent === 'nanobot')`)
	partial, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.seen.some(s => s.length > 0 && s.length < 'Hello from nanobot, streamed in pieces.'.length)`))
	require.NoError(t, err)
	require.True(t, partial, "the reply was drawn piece by piece before it was complete")
	waitFor("an inspect link", `document.querySelector('.inspect') !== null`)

	send("please run the slow tool")
	waitFor("the tool progress line", `document.querySelector('.hints') && document.querySelector('.hints').textContent.includes('↳ exec sleep 4')`)
	send("also, note this")
	waitFor("queued while the tool runs", `document.querySelector('.tag') !== null`)
	shot("chat-during-tool-call.png")
	// A page opening now (or reconnecting after a restart) learns where the turn is from Temporal.
	title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('title').textContent`))
	require.NoError(t, err)
	resp, err := http.Get(chatURL + "api/history?chat=" + strings.TrimPrefix(title, "web:"))
	require.NoError(t, err)
	var hist struct {
		Turn struct {
			Running bool
			State   string
			Hints   []string
		}
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&hist))
	resp.Body.Close()
	require.True(t, hist.Turn.Running, "the turn runs its tool")
	require.Equal(t, "RUN", hist.Turn.State)
	require.Equal(t, []string{"exec sleep 4"}, hist.Turn.Hints)
	waitFor("injected into the turn", `[...document.querySelectorAll('.tag.injected')].length === 1`)
	waitFor("the turn's answer", `document.getElementById('log').textContent.includes('Done. I also saw your note.')`)
	waitFor("progress folded", `document.querySelector('.hints details summary') !== null`)
	require.Equal(t, 3, model.Count(), "one model call answered the tool result and the injected note together")
	require.Contains(t, string(model.Requests()[2].Body), "also, note this")

	send("a long question")
	require.Eventually(t, func() bool { return model.Waiting() == 1 }, time.Minute, 20*time.Millisecond, "the long turn's model call")
	waitFor("stop enabled", `!document.getElementById('stop').disabled`)
	run("press Stop", chromedp.Click(chromedp.CSS("#stop")))
	waitFor("stopped", `document.getElementById('log').textContent.includes('Stopped 1 task(s).')`)
	waitFor("idle again", `document.getElementById('stop').disabled`)

	run("reload", chromedp.Reload())
	waitFor("the conversation from the journal", `document.getElementById('log').textContent.includes('Hello from nanobot') &&
		document.getElementById('log').textContent.includes('Done. I also saw your note.')`)
	waitFor("the session in the list", `[...document.querySelectorAll('#sessions li')].some(li => li.textContent === 'hello')`)
	// The answer's Markdown is rendered by the server (goldmark): a table, a code block, a safe link, raw HTML as text.
	waitFor("the rendered answer", `document.querySelector('.msg.assistant td') !== null && document.querySelector('.msg.assistant td').textContent === 'exec' &&
		document.querySelector('.msg.assistant pre code.language-sh').textContent === 'sleep 4' &&
		document.querySelector('.msg.assistant a[href="https://example.org"]').rel === 'noopener noreferrer' &&
		document.querySelector('.msg.assistant b') === null && document.getElementById('log').textContent.includes('<b>raw</b>')`)
	require.Empty(t, errs.all(), "the page reported errors")

	link, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(".inspect"), "href"))
	require.NoError(t, err)
	inspect := link.Value
	require.Contains(t, inspect, fmt.Sprintf("http://127.0.0.1:%d/namespaces/default/workflows/turn%%2Fweb:", uiPort))
	run("open the turn in the Web UI", chromedp.Navigate(inspect))
	waitFor("the Web UI shows the turn", `document.body.innerText.includes('TurnWorkflow')`)
	waitFor("the history drawn", `document.body.innerText.includes('LLMCall')`)
	shot("turn-in-temporal-ui.png")
}

// waitOnPage polls expr on the page until it is true, failing with what the page shows.
func waitOnPage(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(60*time.Second)))
	if err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("%s: %v; the page shows:\n%s", what, err, body)
	}
}

// webPage drives a Chromium tab on a gateway's chat; a failed step shows the gateway's output.
type webPage struct {
	t           *testing.T
	ctx         context.Context
	out, errOut *testenv.SyncBuffer
}

func (p webPage) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, time.Minute) // a selector that matches nothing must not hang the test
	defer cancel()
	require.NoError(p.t, chromedp.Do(ctx, actions...), "%s\ngateway:\n%s\n%s", what, p.out, p.errOut)
}

func (p webPage) waitFor(what, expr string) { p.t.Helper(); waitOnPage(p.t, p.ctx, what, expr) }

// send types text into the chat's box and presses Send.
func (p webPage) send(text string) {
	p.t.Helper()
	p.run("send "+text, chromedp.SetValue(chromedp.CSS("#text"), text), chromedp.Click(chromedp.CSS("#send")))
}

// newWebPage opens a Chromium tab of that size on a gateway, collecting the errors its pages report.
func newWebPage(t *testing.T, chromium string, width, height int, out, errOut *testenv.SyncBuffer) (webPage, *consoleErrors) {
	t.Helper()
	ctx := browserContext(t, chromium, width, height)
	return webPage{t: t, ctx: ctx, out: out, errOut: errOut}, watchConsole(ctx, t)
}

// pressApprove presses the Approve button of the request the page shows, by
// its own click handler (a pointer click at the button's place can miss it
// while a reloaded page still lays itself out), and waits until it shows pressed.
func (p webPage) pressApprove() {
	p.t.Helper()
	p.run("approve", chromedp.Evaluate[chromedp.Void](`document.querySelector('.approval button.approve').click()`))
	p.waitFor("the Approve button pressed", `document.querySelector('.approval button.approve.chosen') !== null`)
}

// openChat opens the web chat chat on the page at base and waits until it is drawn.
func (p webPage) openChat(base, chat string) {
	p.t.Helper()
	p.run("open web:"+chat, chromedp.Navigate(base+"#"+chat))
	p.waitFor("web:"+chat+" open", `document.getElementById('title').textContent === 'web:`+chat+`'`)
}
