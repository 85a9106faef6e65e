package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/slack/slackpeer"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// riskyClean is the call every approval test makes: the exec deny list
// would refuse it; with tools.approval "risky" it asks a person instead.
// It counts its runs in ran.txt, so "ran once" is a fact on disk.
const riskyClean = `{"command":"rm -rf build; echo ran >> ran.txt"}`

// approvalSetup is temporal-dev, the scripted model and a home whose
// workspace has a build/ folder, with approval on (extra: more config).
func approvalSetup(t *testing.T, extra map[string]any) (*testenv.DevServer, *modeltest.Server, *testenv.Home, []string) {
	t.Helper()
	dev := testenv.StartDevServer(t)
	model := modeltest.New()
	t.Cleanup(model.Close)
	cfg := map[string]any{"tools": map[string]any{"approval": map[string]any{"mode": "risky"}}}
	for k, v := range extra {
		cfg[k] = v
	}
	home := testenv.NewHome(t, model.URL(), cfg)
	require.NoError(t, os.MkdirAll(filepath.Join(home.Workspace, "build"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home.Workspace, "build", "out.o"), []byte("obj"), 0o644))
	return dev, model, home, home.Env(dev.Addr)
}

// scriptRiskyClean has the model call riskyClean, then answer.
func scriptRiskyClean(model *modeltest.Server, answer string) {
	model.Script(
		modeltest.ToolCalls(modeltest.Call{ID: "clean", Name: "exec", Args: riskyClean}),
		modeltest.Text(answer),
	)
}

// requireNotRun: the call waits; nothing ran and the model was asked once.
func requireNotRun(t *testing.T, home *testenv.Home, model *modeltest.Server) {
	t.Helper()
	require.DirExists(t, filepath.Join(home.Workspace, "build"))
	require.NoFileExists(t, filepath.Join(home.Workspace, "ran.txt"))
	require.Equal(t, 1, model.Count(), "the model waits with the turn")
}

// requireRanOnce: the approved call ran exactly once and the model read its result.
func requireRanOnce(t *testing.T, home *testenv.Home, model *modeltest.Server) {
	t.Helper()
	require.NoDirExists(t, filepath.Join(home.Workspace, "build"))
	ran, err := os.ReadFile(filepath.Join(home.Workspace, "ran.txt"))
	require.NoError(t, err)
	require.Equal(t, "ran\n", string(ran), "the approved call ran once")
	require.Equal(t, 2, model.Count())
	msgs := model.Requests()[1].Messages
	last := msgs[len(msgs)-1]
	require.Equal(t, chat.RoleTool, last.Role)
	require.NotContains(t, last.Content, "denied")
	require.NotContains(t, last.Content, "dangerous pattern")
}

// requireExitsOK waits for a command the test started to exit with 0.
func requireExitsOK(t *testing.T, cmd *exec.Cmd, wait time.Duration, out outputs) {
	t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		require.NoError(t, err, "nanobot %v:\n%s", cmd.Args[1:], out)
	case <-time.After(wait):
		_ = cmd.Process.Kill()
		t.Fatalf("nanobot %v did not finish:\n%s", cmd.Args[1:], out)
	}
}

var approvalIDRe = regexp.MustCompile(`Approval needed \[([0-9a-f]{4,6})\]: exec rm -rf build`)

// TestCLIApprovalFromAnotherCLI: `agent -m` shows the request and the way
// to answer it and keeps waiting; `turn show` names what it waits for; a
// second `agent -m "/approve <id>"` in the session runs the call once, and
// the final answer reaches both terminals.
func TestCLIApprovalFromAnotherCLI(t *testing.T) {
	dev, model, home, env := approvalSetup(t, nil)
	startGateway(t, dev, env)
	scriptRiskyClean(model, "Cleaned the build.")

	first, out, errOut := startNanobot(t, env, "agent", "-s", "cli:ops", "-m", "clean the build")
	require.Eventually(t, func() bool { return approvalIDRe.MatchString(out.String()) }, time.Minute, 50*time.Millisecond,
		"the request is shown:\n%s\n%s", out, errOut)
	id := approvalIDRe.FindStringSubmatch(out.String())[1]
	require.Contains(t, out.String(), `nanobot agent -s cli:ops -m "/approve `+id+`"`, "one-shot mode says how to answer")
	requireNotRun(t, home, model)

	shown, showErr, code := runNanobot(t, env, "turn", "show", "cli:ops")
	require.Equal(t, 0, code, showErr)
	require.Contains(t, shown, "Waiting:  waiting for approval: exec rm -rf build; echo ran >> ran.txt (asked just now)")
	shown, showErr, code = runNanobot(t, env, "turn", "show", "--json", "cli:ops")
	require.Equal(t, 0, code, showErr)
	var st struct {
		WorkflowID string `json:"workflow_id"`
		Waiting    struct{ ID, Tool string }
	}
	require.NoError(t, json.Unmarshal([]byte(shown), &st), shown)
	require.Equal(t, "turn/cli:ops", st.WorkflowID)
	require.Equal(t, id, st.Waiting.ID, "scripts see the request too")
	require.Equal(t, "exec", st.Waiting.Tool)

	second, secondErr, code := runNanobot(t, env, "agent", "-s", "cli:ops", "-m", "/approve "+id)
	require.Equal(t, 0, code, secondErr)
	require.Contains(t, second, "… a turn of this session waits for approval ["+id+"]")
	require.True(t, strings.HasSuffix(second, "Cleaned the build.\n"), "the approving terminal gets the turn's answer: %q", second)

	requireExitsOK(t, first, time.Minute, outputs{out, errOut})
	require.True(t, strings.HasSuffix(out.String(), "Cleaned the build.\n"), "the asking terminal too: %q", out.String())
	requireRanOnce(t, home, model)
}

// atThePrompt types lines into an interactive `nanobot agent -s session`
// until they run out, and returns what it printed.
func atThePrompt(t *testing.T, env []string, session, lines string) string {
	t.Helper()
	cmd := exec.Command(testenv.NanobotBin(t), "agent", "-s", session)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(lines)
	var out, errOut testenv.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Start())
	requireExitsOK(t, cmd, 2*time.Minute, outputs{&out, &errOut})
	return out.String()
}

// TestCLIApprovalPrompt: at the interactive prompt the request is asked
// then and there: "y" runs the call once and the answer follows; a second
// request answered with anything else is denied and the model is told.
func TestCLIApprovalPrompt(t *testing.T) {
	dev, model, home, env := approvalSetup(t, nil)
	startGateway(t, dev, env)
	scriptRiskyClean(model, "Cleaned the build.")
	model.Script(
		modeltest.ToolCalls(modeltest.Call{ID: "push", Name: "exec", Args: `{"command":"git push origin main"}`}),
		modeltest.Text("Not pushed, as you said."),
	)

	text := atThePrompt(t, env, "cli:prompt", "clean the build\ny\npush it\nno thanks\n")
	require.Regexp(t, `Approval needed \[[0-9a-f]+\]: exec rm -rf build.*\n(.*\n)*Approve\? \[y/N/always\] → /approve [0-9a-f]+\n`, text)
	require.Contains(t, text, "Cleaned the build.")
	require.Regexp(t, `Approval needed \[[0-9a-f]+\]: exec git push origin main`, text)
	require.Regexp(t, `Approve\? \[y/N/always\] → /deny [0-9a-f]+\n`, text)
	require.Contains(t, text, "Not pushed, as you said.")
	ran, err := os.ReadFile(filepath.Join(home.Workspace, "ran.txt"))
	require.NoError(t, err)
	require.Equal(t, "ran\n", string(ran))
	require.Equal(t, 4, model.Count())
	msgs := model.Requests()[3].Messages
	require.Contains(t, msgs[len(msgs)-1].Content, "The user denied this", "the denial is the tool's result")
}

// TestTelegramApprovalButton: through telegram-test-api, the request
// comes with an inline keyboard; pressing Approve runs the call once, the
// keyboard is taken off, and the turn's answer arrives.
func TestTelegramApprovalButton(t *testing.T) {
	tg := startTelegramEmulator(t)
	_, model, home, env := approvalSetup(t, map[string]any{"channels": map[string]any{"telegram": map[string]any{
		"enabled": true, "token": tg.Token, "apiBase": tg.URL, "allowFrom": []string{"1001"},
	}}})
	logs := startChannelGateway(t, env, "telegram")
	scriptRiskyClean(model, "Cleaned the build.")
	alice := tgUser{ID: 1001, FirstName: "Alice", Username: "alice"}
	tg.say(t, alice, 1001, "private", "clean the build")

	var req botMessage
	require.Eventually(t, func() bool {
		for _, m := range tg.botMessages(t, 1001) {
			if approvalIDRe.MatchString(m.Text) {
				req = m
				return true
			}
		}
		return false
	}, time.Minute, 50*time.Millisecond, "the request; gateway:\n%s", logs)
	id := approvalIDRe.FindStringSubmatch(req.Text)[1]
	require.JSONEq(t, `{"inline_keyboard":[[`+
		`{"text":"Approve","callback_data":"/approve `+id+`"},`+
		`{"text":"Deny","callback_data":"/deny `+id+`"}]]}`, req.Markup, "the guard refuses it: no \"always\"")
	requireNotRun(t, home, model)

	tg.press(t, alice, 1001, req.ID, "/approve "+id)
	var msgs []botMessage
	require.Eventually(t, func() bool {
		msgs = tg.botMessages(t, 1001)
		return len(msgs) > 0 && msgs[len(msgs)-1].Text == "Cleaned the build."
	}, time.Minute, 50*time.Millisecond, "the answer; gateway:\n%s", logs)
	var texts []string
	for _, m := range msgs {
		texts = append(texts, m.Text)
		if m.ID == req.ID {
			require.JSONEq(t, `{"inline_keyboard":[]}`, m.Markup, "the answered request has no buttons")
		}
	}
	require.Contains(t, texts, "Approved: exec rm -rf build; echo ran &gt;&gt; ran.txt — this once; the exec guard refuses it, so it asks every time.",
		"the press is answered like a typed /approve")
	requireRanOnce(t, home, model)
}

// TestWebChatApprovalButton: in headless Chromium the request shows under
// the turn with its buttons; a click on Approve sends the command as the
// user's message, the call runs once and the answer arrives. A reload
// while a second request waits draws it again, from the turn's state.
func TestWebChatApprovalButton(t *testing.T) {
	chromium, model, home, chatURL := webApprovalGateway(t)

	ctx := browserContext(t, chromium, 1100, 800)
	errs := &consoleErrors{}
	require.NoError(t, chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			errs.add("exception: " + e.ExceptionDetails.Text)
		}
	}))
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		require.NoError(t, chromedp.Do(ctx, actions...), what)
	}
	waitFor := func(what, expr string) { t.Helper(); waitOnPage(t, ctx, what, expr) }
	run("open the chat", chromedp.Navigate(chatURL))
	waitFor("page ready", `document.getElementById('title').textContent.startsWith('web:')`)
	run("send", chromedp.SetValue(chromedp.CSS("#text"), "clean the build"), chromedp.Click(chromedp.CSS("#send")))
	waitFor("the request with its buttons", `[...document.querySelectorAll('.approval .buttons button')].map(b => b.textContent).join('|') === 'Approve|Deny'`) // the guard refuses it: no "always"
	waitFor("the status says it waits", `document.getElementById('status').textContent.startsWith('waiting for approval: exec rm -rf build')`)
	requireNotRun(t, home, model)
	if dir := os.Getenv("NANOBOT_SCREENSHOTS"); dir != "" {
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "web-approval.png"), png, 0o644))
	}

	run("click Approve", chromedp.Click(chromedp.CSS(".approval button.approve")))
	waitFor("the answer", `document.getElementById('log').textContent.includes('Cleaned the build.')`)
	waitFor("the command was the user's message", `[...document.querySelectorAll('.msg.user')].some(m => m.textContent.startsWith('/approve '))`)
	waitFor("the confirmation", `document.getElementById('log').textContent.includes('Approved: exec rm -rf build')`)
	waitFor("buttons closed, the turn over", `[...document.querySelectorAll('.approval button')].every(b => b.disabled) && document.getElementById('stop').disabled`)
	requireRanOnce(t, home, model)

	// A second request, and a page that opens while it waits.
	model.Script(
		modeltest.ToolCalls(modeltest.Call{ID: "push", Name: "exec", Args: `{"command":"git push origin main"}`}),
		modeltest.Text("Not pushed."),
	)
	run("send again", chromedp.SetValue(chromedp.CSS("#text"), "push it"), chromedp.Click(chromedp.CSS("#send")))
	waitFor("the second request", `document.querySelectorAll('.approval').length === 2`)
	run("reload", chromedp.Reload())
	waitFor("the waiting request drawn again", `document.querySelectorAll('.approval').length === 1 &&
		document.querySelector('.approval').textContent.includes('exec git push origin main') &&
		!document.querySelector('.approval button.deny').disabled`)
	run("click Deny", chromedp.Click(chromedp.CSS(".approval button.deny")))
	waitFor("the answer after the denial", `document.getElementById('log').textContent.includes('Not pushed.')`)
	msgs := model.Requests()[3].Messages
	require.Contains(t, msgs[len(msgs)-1].Content, "The user denied this")
	require.Empty(t, errs.all(), "the page reported errors")
}

// TestSlackApprovalButton: through the real gateway and slackpeer, a
// request asked in the reply thread of a channel mention carries block
// buttons; a click on Approve (a block_actions envelope over Socket Mode)
// reaches the thread's session that asked, runs the call once, and the
// answer arrives in the thread while the buttons give way to who answered.
func TestSlackApprovalButton(t *testing.T) {
	peer := slackpeer.New(t)
	const channel, alice, first = "C0E2E0002", "U0ALICE01", "1700000000.000100"
	_, model, home, env := approvalSetup(t, map[string]any{"channels": map[string]any{"slack": map[string]any{
		"enabled": true, "botToken": "xoxb-e2e", "appToken": "xapp-e2e", "apiBase": peer.APIURL(), "allowFrom": []string{alice},
	}}})
	logs := startSlackGateway(t, env)
	require.Eventually(t, func() bool { return peer.Connections() == 1 }, 90*time.Second, 50*time.Millisecond, "no Socket Mode connection")
	peer.Hello()
	scriptRiskyClean(model, "Cleaned the build.")
	peer.Push("env-1", "Ev0001", 0, slackpeer.AppMention(channel, alice, first, "", "<@"+slackpeer.BotUserID+"> clean the build"))

	var req slackpeer.Message
	require.Eventually(t, func() bool {
		for _, m := range slackThreadPosts(peer, channel, first) {
			if strings.Contains(m.Blocks, `"actions"`) {
				req = m
				return true
			}
		}
		return false
	}, time.Minute, 50*time.Millisecond, "the request with buttons; gateway:\n%s", logs)
	m := approvalIDRe.FindStringSubmatch(req.Text)
	require.NotNil(t, m, req.Text)
	id := m[1]
	requireNotRun(t, home, model)

	peer.PushClick("env-2", slackpeer.Click{User: alice, Channel: channel, Message: req, ActionID: "nanobot_approval_approve",
		BlockID: "nanobot_approval", Value: "/approve " + id})
	require.Eventually(t, func() bool {
		for _, p := range slackThreadPosts(peer, channel, first) {
			if shown, _ := peer.Shown(channel, p.TS); shown == "Cleaned the build." {
				return true
			}
		}
		return false
	}, time.Minute, 50*time.Millisecond, "the answer in the thread; gateway:\n%s", logs)
	shownReq := ""
	for _, u := range peer.Updates() {
		if u.TS == req.TS {
			shownReq = u.Blocks
		}
	}
	require.NotContains(t, shownReq, `"actions"`, "the buttons are gone")
	require.Contains(t, shownReq, "answered")
	requireRanOnce(t, home, model)
}

// webApprovalGateway starts a gateway with the web chat on a free port and
// the model scripted to ask for the risky clean; it returns the chat's URL.
func webApprovalGateway(t *testing.T) (chromium string, model *modeltest.Server, home *testenv.Home, chatURL string) {
	t.Helper()
	chromium = browser(t)
	webPort := testenv.FreePort(t)
	dev, model, home, env := approvalSetup(t, map[string]any{"channels": map[string]any{"web": map[string]any{"enabled": true, "port": webPort}}})
	startGateway(t, dev, env)
	scriptRiskyClean(model, "Cleaned the build.")
	return chromium, model, home, fmt.Sprintf("http://127.0.0.1:%d/", webPort)
}
