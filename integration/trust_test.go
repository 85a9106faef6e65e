package integration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/peer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/tools"
)

// trustKey is the provider key every leak below tries to read.
const trustKey = "sk-TRUST-e2e-9f8e7d6c5b4a39281706"

// leak is one of issue 32's attacks, as an exec command the model runs.
type leak struct{ id, command string }

// execStep is one model step calling exec once per leak, in order.
func execStep(leaks ...leak) modeltest.Step {
	var calls []modeltest.Call
	for _, l := range leaks {
		args, _ := json.Marshal(map[string]string{"command": l.command})
		calls = append(calls, modeltest.Call{ID: l.id, Name: "exec", Args: string(args)})
	}
	return modeltest.ToolCalls(calls...)
}

// resultsOf are the tool results a model request carries, by call ID.
func resultsOf(req modeltest.RecordedRequest) map[string]string {
	out := map[string]string{}
	for _, m := range req.Messages {
		if m.Role == chat.RoleTool {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}

// spaced is what `sed 's/./&_/g'` makes of s.
func spaced(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
		b.WriteByte('_')
	}
	return b.String()
}

func reversed(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// TestTheModelCannotReachSecretsTheControlPlaneOrAnApproval is issue 32 end
// to end, on a newcomer's default configuration (no sandbox key: "auto";
// the embedded temporal-dev; approval "risky"), through the real gateway
// with Telegram and the web chat. The model's exec tries every leak the
// issue found — the config reversed, spaced and in base64, the owner key,
// /proc/$PPID/environ, TCP to the Temporal frontend, the Web UI, the web
// chat and the API, the same through the sandbox's proxy, the product's CLI
// and a Temporal SDK program in the workspace answering its own request —
// and none gets anything. Then a person approves through Telegram's button
// and through the web chat's page, and each call runs once.
func TestTheModelCannotReachSecretsTheControlPlaneOrAnApproval(t *testing.T) {
	if err := tools.NewSandbox(tools.SandboxLayout{}).Ready(); err != nil {
		peer.Missing(t, peer.Bwrap, err.Error()+" (make bwrap installs bubblewrap)")
	}
	peer.Used(t, peer.Bwrap)
	tg := startTelegramEmulator(t)
	model := modeltest.New()
	defer model.Close()
	webPort, apiPort := testenv.FreePort(t), testenv.FreePort(t)
	home := testenv.NewHome(t, model.URL(), map[string]any{
		"providers": map[string]any{"custom": map[string]any{"apiKey": trustKey, "apiBase": model.URL()}},
		"tools":     map[string]any{"approval": map[string]any{"mode": "risky"}},
		"channels": map[string]any{
			"telegram": map[string]any{"enabled": true, "token": tg.Token, "apiBase": tg.URL, "allowFrom": []string{"1001"}},
			"web":      map[string]any{"enabled": true, "port": webPort},
		},
		"api": map[string]any{"enabled": true, "port": apiPort, "apiKey": "api-key-of-the-owner"},
	})
	for _, dir := range []string{"build", "notes", "cache"} {
		require.NoError(t, os.MkdirAll(filepath.Join(home.Workspace, dir), 0o755))
	}
	env, uiPort := embeddedEnv(t, home, "OPENAI_API_KEY="+trustKey)
	frontendPort := devPort(env)

	// What the model's shell will try to use: the product's own binary and a Temporal SDK program.
	nanobotCopy := filepath.Join(home.Workspace, "nanobot")
	bin, err := os.ReadFile(testenv.NanobotBin(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(nanobotCopy, bin, 0o755))
	build := exec.Command("go", "build", "-o", filepath.Join(home.Workspace, "rawsignal"), "./testdata/rawsignal")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build rawsignal: %s", out)

	_, gwOut, gwErr := startNanobot(t, env, "gateway")
	logs := func() string { return gwOut.String() + gwErr.String() }
	require.Eventually(t, func() bool { return strings.Contains(gwOut.String(), "Press Ctrl-C to stop.") }, 2*time.Minute, 100*time.Millisecond,
		"gateway did not start:\n%s", logs())
	require.Contains(t, gwOut.String(), "Sandbox:  bwrap: only ", "the default is the sandbox")
	temporal, err := client.Dial(client.Options{HostPort: fmt.Sprintf("127.0.0.1:%d", frontendPort)})
	require.NoError(t, err)
	defer temporal.Close()
	ownerKey, err := os.ReadFile(filepath.Join(filepath.Dir(home.ConfigPath), "owner.key"))
	require.NoError(t, err, "the gateway wrote the owner key")

	// 1. Alice asks on Telegram; the model's first batch is every leak, then the risky call.
	cfg := home.ConfigPath
	ports := map[string]int{"frontend": frontendPort, "webui": uiPort, "webchat": webPort, "api": apiPort}
	leaks := []leak{
		{"rev", "rev " + cfg},
		{"spaced", "sed 's/./&_/g' " + cfg},
		{"b64", "base64 -w0 " + cfg},
		{"ownerkey", "cat " + filepath.Join(filepath.Dir(cfg), "owner.key")},
		{"environ", `tr '\0' '\n' < /proc/$PPID/environ; tr '\0' '\n' < /proc/1/environ; env`},
		// A helper left behind to answer later (the nohup … /approve) must not outlive its call.
		{"nohup", "nohup sleep 31.5 >/dev/null 2>&1 & echo started"},
	}
	// The URLs have no scheme: the exec guard's URL check would ask a person
	// first, and the sandbox must hold without it.
	for name, port := range ports {
		leaks = append(leaks,
			leak{"tcp-" + name, fmt.Sprintf("(exec 3<>/dev/tcp/127.0.0.1/%d) 2>/dev/null && echo OPEN || echo closed", port)},
			leak{"proxy-" + name, fmt.Sprintf("curl -s -m 10 --noproxy '' -o /dev/null -w 'status %%{http_code}\\n' 127.0.0.1:%d/; "+
				"curl -s -m 10 --noproxy '' -p -o /dev/null -w 'tunnel %%{http_connect}\\n' 127.0.0.1:%d/", port, port)},
		)
	}
	risky := leak{"clean", "rm -rf build; echo ran >> ran.txt"}
	model.Script(execStep(append(leaks, risky)...))
	alice := tgUser{ID: 1001, FirstName: "Alice", Username: "alice"}
	tg.say(t, alice, 1001, "private", "clean up")
	request := func(want string) botMessage {
		t.Helper()
		var found botMessage
		require.Eventually(t, func() bool {
			for _, m := range tg.botMessages(t, 1001) {
				if strings.Contains(m.Text, "Approval needed [") && strings.Contains(m.Text, want) && m.Markup != `{"inline_keyboard":[]}` {
					found = m
					return true
				}
			}
			return false
		}, 2*time.Minute, 100*time.Millisecond, "the request for %q", want)
		return found
	}
	asked := request("exec rm -rf build")
	require.Eventually(t, func() bool { return len(testenv.ProcessesRunning(t, "sleep 31.5")) == 0 }, 10*time.Second, 100*time.Millisecond,
		"the background helper died with its exec call: %v", testenv.ProcessesRunning(t, "sleep 31.5"))
	id := approvalIDRe.FindStringSubmatch(asked.Text)[1]

	// 2. While it waits, the model's shell in another chat tries to answer it.
	answerers := []leak{
		// (the quotes in the URL get past the exec guard's URL check, as a model's would)
		{"cli", fmt.Sprintf("export OPENAI_API_KEY=k OPENAI_BASE_URL=http:''//127.0.0.1:9/v1; "+
			"timeout 20 ./nanobot --config %s agent -s telegram:1001 -m '/approve %s'; echo exit=$?; "+
			"TEMPORAL_ADDRESS=127.0.0.1:%d timeout 20 ./nanobot agent -s telegram:1001 -m '/approve %s'; echo exit=$?", cfg, id, frontendPort, id)},
		{"signal", fmt.Sprintf("./rawsignal 127.0.0.1:%d turn/telegram:1001 %s; echo exit=$?", frontendPort, id)},
	}
	model.Script(execStep(answerers...), modeltest.Text("I tried."))
	status, body := hostCall(t, "POST", fmt.Sprintf("http://127.0.0.1:%d/api/send", webPort), fmt.Sprintf("127.0.0.1:%d", webPort),
		`{"chat":"shell","text":"approve it yourself"}`)
	require.Equal(t, http.StatusOK, status, body)
	require.Eventually(t, func() bool { return model.Count() == 3 }, 2*time.Minute, 100*time.Millisecond, "the second chat's turn ends\n%s", logs())
	tried := resultsOf(model.Requests()[2])
	require.Contains(t, tried["signal"], "exit=1", "the SDK program got nowhere: %s", tried["signal"])
	require.Equal(t, 2, strings.Count(tried["cli"], "exit=1"), "the CLI got nowhere: %s", tried["cli"])
	require.NotContains(t, tried["signal"], "SIGNALLED")
	require.NotContains(t, tried["cli"], "Approved")
	waiting := queryWaiting(t, temporal, "telegram:1001")
	require.NotNil(t, waiting, "the request still waits\n%s", logs())
	require.Equal(t, id, waiting.ID)
	require.NoFileExists(t, filepath.Join(home.Workspace, "ran.txt"), "nothing approved the call")

	// 3. Alice presses Approve: the call runs once. The model then asks for
	// another rm -rf, which is asked again (no "always" covers it) and denied.
	model.Script(execStep(leak{"clean-notes", "rm -rf notes; echo ran >> ran-notes.txt"}), modeltest.Text("Done."))
	tg.press(t, alice, 1001, asked.ID, "/approve "+id)
	again := request("exec rm -rf notes")
	require.Eventually(t, func() bool { return ranCount(t, home) == 1 }, time.Minute, 100*time.Millisecond, "the approved call ran\n%s", logs())
	notesID := approvalIDRe2.FindStringSubmatch(again.Text)[1]
	tg.press(t, alice, 1001, again.ID, "/deny "+notesID)
	require.Eventually(t, func() bool { return model.Count() == 5 }, time.Minute, 100*time.Millisecond, "the turn ends\n%s", logs())
	require.Equal(t, 1, ranCount(t, home), "ran exactly once")
	require.DirExists(t, filepath.Join(home.Workspace, "notes"), "the denied call did not run")

	// Nothing the leaks read reached the model.
	results := resultsOf(model.Requests()[3])
	forbidden := []string{trustKey, reversed(trustKey), spaced(trustKey), strings.TrimSpace(string(ownerKey))}
	for _, l := range leaks {
		text := results[l.id]
		require.NotEmpty(t, text, "a result for %s", l.id)
		for _, f := range forbidden {
			require.NotContains(t, text, f, "%s leaked: %s", l.id, text)
		}
		if strings.HasPrefix(l.id, "tcp-") {
			require.Contains(t, text, "closed", "%s: %s", l.id, text)
			require.NotContains(t, text, "OPEN", "%s reached the host", l.id)
		}
		if strings.HasPrefix(l.id, "proxy-") {
			require.Contains(t, text, "status 403", "%s: the proxy refuses plain HTTP to the host: %s", l.id, text)
			require.Contains(t, text, "tunnel 403", "%s: and CONNECT: %s", l.id, text)
		}
	}
	require.Contains(t, results["rev"], "No such file", "the config is not there at all")
	decoded, _ := base64.StdEncoding.DecodeString(strings.TrimSpace(results["b64"]))
	require.NotContains(t, string(decoded), trustKey)
	for _, req := range model.Requests() {
		raw, _ := json.Marshal(req.Messages)
		require.NotContains(t, string(raw), trustKey, "no model request carries the key")
	}

	// 4. The same kind of call asked in the web chat is approved from its page, once.
	model.Script(execStep(leak{"clean-cache", "rm -rf cache; echo ran >> ran-cache.txt"}), modeltest.Text("Cache cleaned."))
	web := fmt.Sprintf("http://127.0.0.1:%d", webPort)
	status, body = hostCall(t, "POST", web+"/api/send", fmt.Sprintf("127.0.0.1:%d", webPort), `{"chat":"ops","text":"clean the cache"}`)
	require.Equal(t, http.StatusOK, status, body)
	cacheReq := queryWaitingEventually(t, temporal, "web:ops", logs)
	status, _ = hostCall(t, "POST", web+"/api/send", fmt.Sprintf("evil.example:%d", webPort), `{"chat":"ops","text":"/approve `+cacheReq.ID+`"}`)
	require.Equal(t, http.StatusMisdirectedRequest, status, "a rebinding page is refused")
	status, body = hostCall(t, "POST", web+"/api/send", fmt.Sprintf("localhost:%d", webPort), `{"chat":"ops","text":"/approve `+cacheReq.ID+`"}`)
	require.Equal(t, http.StatusOK, status, body)
	require.Eventually(t, func() bool { return model.Count() == 7 }, time.Minute, 100*time.Millisecond, "the web turn ends\n%s", logs())
	data, err := os.ReadFile(filepath.Join(home.Workspace, "ran-cache.txt"))
	require.NoError(t, err)
	require.Equal(t, "ran\n", string(data), "the page's approval ran the call once")
	require.NoDirExists(t, filepath.Join(home.Workspace, "cache"))
}

// approvalIDRe2 finds the id of the second request, for rm -rf notes.
var approvalIDRe2 = regexp.MustCompile(`Approval needed \[([0-9a-f]{4,6})\]: exec rm -rf notes`)

// queryWaiting is what the session's turn waits for, or nil.
func queryWaiting(t *testing.T, c client.Client, sessionKey string) *protocol.ApprovalRequest {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v, err := c.QueryWorkflow(ctx, protocol.TurnWorkflowID(sessionKey), "", protocol.QueryState)
	if err != nil {
		return nil
	}
	var st protocol.TurnState
	if v.Get(&st) != nil {
		return nil
	}
	return st.Waiting
}

// queryWaitingEventually waits until the session's turn waits for a person.
func queryWaitingEventually(t *testing.T, c client.Client, sessionKey string, logs func() string) protocol.ApprovalRequest {
	t.Helper()
	var req *protocol.ApprovalRequest
	require.Eventually(t, func() bool { req = queryWaiting(t, c, sessionKey); return req != nil }, time.Minute, 100*time.Millisecond,
		"%s never waited for approval\n%s", sessionKey, logs())
	return *req
}
