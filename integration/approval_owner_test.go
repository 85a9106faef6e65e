package integration

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// refusedText is the one line an answer that is not a person's gets.
const refusedText = "Only someone in the chat that was asked, or the owner's CLI, can answer this request."

// checkedAnswers counts the answers a turn checked (its ApprovalVerify local activities).
func checkedAnswers(t *testing.T, dev *testenv.DevServer, workflowID string) int {
	n := 0
	for _, ev := range testenv.History(t, dev.Client, workflowID, "").Events {
		for _, p := range ev.GetMarkerRecordedEventAttributes().GetDetails()["data"].GetPayloads() {
			if bytes.Contains(p.GetData(), []byte(protocol.ActivityApprovalVerify)) {
				n++
			}
		}
	}
	return n
}

// refusals counts the refusals journaled in a session (each command and its reply are kept).
func refusals(t *testing.T, home *testenv.Home, key string) int {
	n := 0
	for _, m := range loadSession(t, home, key).Messages {
		if m.Content == refusedText {
			n++
		}
	}
	return n
}

// TestOnlyAPersonAnswersAnApproval: issue 32's attacks on a request that
// waits in a web chat (a chat channel, as Telegram is): a raw approval
// signal sent with the SDK, a raw inbound "/approve", and `nanobot agent -m
// /approve` from a HOME without the owner key are refused and the call keeps
// waiting; the owner's CLI must name the id, and then runs it once.
func TestOnlyAPersonAnswersAnApproval(t *testing.T) {
	port := testenv.FreePort(t)
	dev, model, home, env := approvalSetup(t, map[string]any{"channels": map[string]any{"web": map[string]any{"enabled": true, "port": port}}})
	_, out, errOut := startGateway(t, dev, env)
	logs := outputs{out, errOut}
	scriptRiskyClean(model, "Cleaned the build.")
	resp, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/api/send", port), "application/json", strings.NewReader(`{"chat":"ops","text":"clean the build"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	const key = "web:ops"
	wid := protocol.TurnWorkflowID(key)
	req := waitingRequest(t, dev, key, logs.String)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// (a) Raw approval signals from this process: no proof, a made-up one.
	require.NoError(t, dev.Client.SignalWorkflow(ctx, wid, "", protocol.SignalApproval, protocol.ApprovalAnswer{ID: req.ID, Verdict: protocol.VerdictApprove, By: "web:web"}))
	require.NoError(t, dev.Client.SignalWorkflow(ctx, wid, "", protocol.SignalApproval,
		protocol.ApprovalAnswer{ID: req.ID, Verdict: protocol.VerdictAlways, Proof: strings.Repeat("ab", 32)}))
	require.Eventually(t, func() bool { return checkedAnswers(t, dev, wid) == 2 }, time.Minute, 100*time.Millisecond,
		"the turn checks both answers\n%s", logs)
	require.Equal(t, req.ID, waitingRequest(t, dev, key, logs.String).ID, "the turn keeps waiting")
	requireNotRun(t, home, model)

	// (b) A raw inbound "/approve" into the session, with and without the id.
	web := protocol.Route{Channel: "web", ChatID: "ops", SenderID: "web"}
	for i, text := range []string{"/approve " + req.ID, "/approve"} {
		raw := protocol.Inbound{ID: fmt.Sprintf("raw-%d", i), SessionKey: key, Route: web, Content: text, SentAt: time.Now()}
		require.NoError(t, dev.Client.SignalWorkflow(ctx, wid, "", protocol.SignalInbound, raw))
	}
	require.Eventually(t, func() bool { return refusals(t, home, key) == 2 }, time.Minute, 100*time.Millisecond, "both refused\n%s", logs)
	require.Contains(t, logs.String(), "approval command refused")
	require.Contains(t, logs.String(), `channel=web chat=ops sender=web message=raw-0 proof="no seal"`)

	// (c) The product's CLI from a HOME without the owner key (its own
	// sessions lack the refusal it is sent, so it is stopped once refused).
	stranger := testenv.NewHome(t, model.URL(), nil)
	cli, cliOut, cliErr := startNanobot(t, stranger.Env(dev.Addr), "agent", "-s", key, "-m", "/approve "+req.ID)
	require.Eventually(t, func() bool { return refusals(t, home, key) == 3 }, time.Minute, 100*time.Millisecond,
		"refused\n%s\n%s\n%s", cliOut, cliErr, logs)
	require.NoError(t, cli.Process.Kill())
	_, _ = cli.Process.Wait()
	require.Contains(t, logs.String(), `channel=cli chat=ops sender=user`)
	require.Contains(t, logs.String(), `proof="bad seal"`)
	require.Equal(t, req.ID, waitingRequest(t, dev, key, logs.String).ID, "the turn keeps waiting")
	requireNotRun(t, home, model)

	// The owner's CLI answers a web chat's request only by its id, and then it runs once.
	said, saidErr, code := runNanobot(t, env, "agent", "-s", key, "-m", "/approve")
	require.Equal(t, 0, code, saidErr)
	require.Contains(t, said, "Request "+req.ID+" was asked in another chat: name it to answer from here (/approve "+req.ID+").")
	requireNotRun(t, home, model)
	said, saidErr, code = runNanobot(t, env, "agent", "-s", key, "-m", "/approve "+req.ID)
	require.Equal(t, 0, code, saidErr)
	require.True(t, strings.HasSuffix(said, "Cleaned the build.\n"), "the owner's terminal gets the turn's answer: %q\n%s", said, logs)
	requireRanOnce(t, home, model)
	require.Equal(t, 3, checkedAnswers(t, dev, wid), "the owner's answer was checked too")
}

// TestCLIAlwaysCoversThisCommandOnly: at the interactive prompt, "always"
// on `ls build` runs it, and it runs again unasked; `ls notes` is asked.
func TestCLIAlwaysCoversThisCommandOnly(t *testing.T) {
	dev, model, home, env := approvalSetup(t, map[string]any{"tools": map[string]any{"approval": map[string]any{"mode": "risky", "tools": []string{"exec"}}}})
	require.NoError(t, os.MkdirAll(filepath.Join(home.Workspace, "notes"), 0o755))
	startGateway(t, dev, env)
	for _, dir := range []string{"build", "build", "notes"} {
		model.Script(
			modeltest.ToolCalls(modeltest.Call{ID: "ls-" + dir, Name: "exec", Args: `{"command":"ls ` + dir + `"}`}),
			modeltest.Text("Listed "+dir+"."),
		)
	}
	text := atThePrompt(t, env, "cli:always", "list build\nalways\nlist build again\nlist notes\nn\n")
	require.Equal(t, 2, strings.Count(text, "Approval needed ["), text)
	require.Regexp(t, `Approval needed \[[0-9a-f]+\]: exec ls build\n(.*\n)*Approve\? \[y/N/always\] → /approve [0-9a-f]+ always\n`, text)
	require.Regexp(t, `Approval needed \[[0-9a-f]+\]: exec ls notes\n(.*\n)*Approve\? \[y/N/always\] → /deny [0-9a-f]+\n`, text)
	require.Equal(t, 6, model.Count())
	ran := model.Requests()[3].Messages
	require.Contains(t, ran[len(ran)-1].Content, "out.o", "the second ls build ran unasked")
	denied := model.Requests()[5].Messages
	require.Contains(t, denied[len(denied)-1].Content, "The user denied this")

	listed, listErr, code := runNanobot(t, env, "agent", "-s", "cli:always", "-m", "/approvals")
	require.Equal(t, 0, code, listErr)
	require.Contains(t, listed, "- always: exec ls build")
	require.NotContains(t, listed, "notes")
}
