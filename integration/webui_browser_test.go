package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestWebUIShowsActivitySummariesInABrowser opens a finished turn in the
// Temporal Web UI that temporal-dev embeds, in headless Chromium, and finds
// the turn's activity summaries (the model calls, the tool with its key
// argument) drawn in the event history: what a user sees when inspecting a turn.
func TestWebUIShowsActivitySummariesInABrowser(t *testing.T) {
	chromium := browser(t)
	uiPort := testenv.FreePort(t)
	dev := testenv.StartDevServer(t, "--headless=false", "--ui-port", strconv.Itoa(uiPort))
	model := modeltest.New(
		modeltest.ToolCalls(modeltest.Call{ID: "c1", Name: "list_dir", Args: `{"path":"."}`}).Usage(1150, 50),
		modeltest.Text("listed").Usage(300, 7),
	)
	t.Cleanup(model.Close)
	home := testenv.NewHome(t, model.URL(), nil)
	startWorker(t, home.Env(dev.Addr))
	r := &rig{dev: dev, model: model, home: home}
	r.bus = &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model"})}
	const chatID = "webui-browser"
	r.send(t, chatID, "what is here?")
	require.Equal(t, "listed", r.result(t, chatID).ReplyPreview)

	uiBase := fmt.Sprintf("http://127.0.0.1:%d", uiPort)
	require.Eventually(t, func() bool {
		resp, err := http.Get(uiBase + "/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, time.Minute, 100*time.Millisecond, "the Web UI never answered on %s", uiBase)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.WindowSize(1400, 3000))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	// The first call starts the browser, on a context without a deadline (it would stop the browser).
	require.NoError(t, chromedp.Do(ctx))
	text := func() string {
		s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ''`))
		return s
	}
	waitFor := func(what, expr string) {
		t.Helper()
		err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(2*time.Minute), chromedp.WithPollingInterval(200*time.Millisecond)))
		if err != nil {
			shot(t, ctx, "webui-failed.png")
		}
		require.NoError(t, err, "%s; the page shows:\n%s", what, text())
	}
	page := fmt.Sprintf("%s/namespaces/default/workflows/%s", uiBase, url.PathEscape(protocol.TurnWorkflowID("cli:"+chatID)))
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(page)))
	waitFor("the turn's page", `document.body.innerText.includes('TurnWorkflow') && document.body.innerText.includes('COMPLETED')`)
	// clickable clicks the first link or button whose text is label, once it is there.
	clickable := func(label string) string {
		return fmt.Sprintf(`(() => { const e = [...document.querySelectorAll('a,button')].find(e => e.innerText.trim().startsWith(%q)); if (!e) return false; e.click(); return true })()`, label)
	}
	waitFor("the Event History tab", clickable("Event History"))
	waitFor("the compact view", clickable("Compact"))
	// The UI renders each summary (markdown) in an iframe of its own.
	const summaries = `[...document.querySelectorAll('iframe[title=Summary]')].map(f => f.contentDocument && f.contentDocument.body ? f.contentDocument.body.innerText.trim() : '')`
	// Each iframe fills in on its own: wait for every summary the test reads.
	want := []string{"llm #2 test-model", "tool list_dir path=.", "llm #1 test-model", "restore", "build", "save"}
	wantJS, err := json.Marshal(want)
	require.NoError(t, err)
	waitFor("the activity summaries", `(() => { const s = `+summaries+`; return `+string(wantJS)+`.every(w => s.includes(w)) })()`)
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](summaries))
	require.NoError(t, err)
	t.Logf("summaries drawn: %q", got)
	// Newest first: the second model call, the tool it asked for, the first model call, then the fast states.
	require.Equal(t, want[:3], inOrder(got, want[:3]...))
	require.Subset(t, got, []string{"restore", "build", "save"}, "the fast states (local activities) are labelled too")
	shot(t, ctx, "webui-turn-summaries.png")
}

// inOrder is the subsequence of list made of want's items, in list's order.
func inOrder(list []string, want ...string) []string {
	var out []string
	for _, s := range list {
		for _, w := range want {
			if s == w {
				out = append(out, s)
			}
		}
	}
	return out
}

// shot saves a screenshot where NANOBOT_SCREENSHOTS says (else the test's temp dir).
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("NANOBOT_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, png, 0o644); err == nil {
		t.Logf("screenshot: %s", p)
	}
}
