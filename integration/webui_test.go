package integration

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

func payloadString(t *testing.T, p *commonpb.Payload) string {
	t.Helper()
	if p == nil {
		return ""
	}
	var s string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p, &s))
	return s
}

// TestTurnSummariesMemoAndSearchAttributes: what the Web UI shows of a turn —
// activity summaries (the model call, the tool with its key argument), the
// last model call's outcome in the current details, the memo and the
// search attributes — is in the turn's history and description.
func TestTurnSummariesMemoAndSearchAttributes(t *testing.T) {
	r := newRig(t, protocol.Settings{})
	r.model.Script(
		modeltest.ToolCalls(modeltest.Call{ID: "c1", Name: "list_dir", Args: `{"path":"."}`}).Usage(1150, 50),
		modeltest.Block().Text("listed").Usage(300, 7),
	)
	r.send(t, "webui", "what is here?")
	id := protocol.TurnWorkflowID("cli:webui")
	ctx := context.Background()
	var details string
	require.Eventually(t, func() bool {
		v, err := r.dev.Client.QueryWorkflow(ctx, id, "", "__temporal_workflow_metadata")
		if err != nil {
			return false
		}
		var md sdkpb.WorkflowMetadata
		if v.Get(&md) != nil {
			return false
		}
		details = md.GetCurrentDetails()
		return strings.HasPrefix(details, "RUN iteration 2/")
	}, time.Minute, 50*time.Millisecond, "details: %q", details)
	require.Contains(t, details, "llm #1 test-model → 1 tool call, 1.2k tokens")
	// Release only frees a request already held: wait for the second call to arrive.
	require.Eventually(t, func() bool { return r.model.Waiting() == 1 }, time.Minute, 20*time.Millisecond)
	r.model.Release()
	require.Equal(t, "listed", r.result(t, "webui").ReplyPreview)
	testenv.RecordHistory(t, r.dev.Client, id, "", "turn_memo_summaries")

	var summaries []string
	for _, ev := range testenv.History(t, r.dev.Client, id, "").Events {
		if ev.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED {
			summaries = append(summaries, payloadString(t, ev.GetUserMetadata().GetSummary()))
		}
	}
	require.Contains(t, summaries, "llm #1 test-model")
	require.Contains(t, summaries, "tool list_dir path=.")
	require.Contains(t, summaries, "llm #2 test-model")

	desc, err := r.dev.Client.DescribeWorkflowExecution(ctx, id, "")
	require.NoError(t, err)
	memo := map[string]any{}
	for k, p := range desc.GetWorkflowExecutionInfo().GetMemo().GetFields() {
		var v any
		require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p, &v))
		memo[k] = v
	}
	require.Equal(t, "test-model", memo["model"])
	require.Equal(t, protocol.StopCompleted, memo["stop_reason"])
	require.EqualValues(t, 1450, memo["prompt_tokens"])
	require.Equal(t, "1.4k in / 57 out", memo["tokens"])
	sa := desc.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()
	require.Equal(t, "cli:webui", payloadString(t, sa["NanobotSessionKey"]))
	require.Equal(t, "cli", payloadString(t, sa["NanobotChannel"]))
	require.Contains(t, payloadString(t, desc.GetExecutionConfig().GetUserMetadata().GetSummary()), "what is here?")
}

// TestSetupTemporalRegistersSearchAttributes: a server started without
// nanobot's search attributes gets them from `nanobot setup-temporal`.
func TestSetupTemporalRegistersSearchAttributes(t *testing.T) {
	dev := testenv.StartBareDevServer(t, "--search-attribute", "Unrelated=Int")
	home := testenv.NewHome(t, "http://127.0.0.1:9/v1", nil)
	env := home.Env(dev.Addr)
	out, stderr, code := runNanobot(t, env, "setup-temporal")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "Registered 2 search attribute(s)")
	require.Contains(t, out, "NanobotSessionKey")
	out, stderr, code = runNanobot(t, env, "setup-temporal")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "already has nanobot's search attributes")
}

// TestNoSecretInHistoriesOrLogs runs turns in which the configured keys
// reach the model's text, a tool's output and arguments, and a provider's
// error, then scans every workflow history (payloads, summaries, memo,
// failures) and the worker's debug logs for them.
func TestNoSecretInHistoriesOrLogs(t *testing.T) {
	const apiKey, searchKey, tgToken = "sk-nanobot-SECRET-7Q4X9", "brave-SECRET-5K2M8", "987654:TG-SECRET-TOKEN"
	secretList := []string{apiKey, searchKey, tgToken}
	dev := testenv.StartDevServer(t)
	model := modeltest.New().RequireKey(apiKey)
	t.Cleanup(model.Close)
	home := testenv.NewHome(t, model.URL(), map[string]any{
		"tools":     map[string]any{"web": map[string]any{"search": map[string]any{"apiKey": searchKey}}},
		"channels":  map[string]any{"telegram": map[string]any{"enabled": false, "token": tgToken}},
		"providers": map[string]any{"custom": map[string]any{"apiKey": apiKey, "apiBase": model.URL()}},
	})
	require.NoError(t, os.WriteFile(filepath.Join(home.Workspace, "keys.txt"), []byte(strings.Join(secretList, "\n")), 0o644))

	cmd := exec.Command(testenv.NanobotBin(t), "--log-format", "json", "worker")
	cmd.Env = home.Env(dev.Addr, "NANOBOT_LOG_LEVEL=debug")
	var logs testenv.SyncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })

	r := &rig{dev: dev, model: model, home: home}
	r.bus = &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model"})}
	r.turn(t, "s1", "say my key", modeltest.Text("Your key is "+apiKey+" and "+tgToken))
	r.turn(t, "s2", "read keys",
		modeltest.ToolCalls(modeltest.Call{ID: "k1", Name: "read_file", Args: `{"path":"keys.txt"}`}),
		modeltest.ToolCalls(modeltest.Call{ID: "k2", Name: "write_file", Args: `{"path":"copy.txt","content":"` + searchKey + `"}`}),
		modeltest.Text("done"))
	r.turn(t, "s3", "fail", modeltest.Error(400, "invalid_request", "Bad request for key "+apiKey))
	require.NotEmpty(t, model.Requests())

	var scanned, masked int
	ctx := context.Background()
	resp, err := dev.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{PageSize: 100})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(resp.GetExecutions()), 3)
	for _, e := range resp.GetExecutions() {
		wid, rid := e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId()
		for _, ev := range testenv.History(t, dev.Client, wid, rid).Events {
			raw, err := proto.Marshal(ev)
			require.NoError(t, err)
			for _, s := range secretList {
				require.False(t, bytes.Contains(raw, []byte(s)), "%s: event %d (%s) holds a secret", wid, ev.GetEventId(), ev.GetEventType())
			}
			scanned++
			masked += bytes.Count(raw, []byte("[redacted]"))
		}
		desc, err := dev.Client.DescribeWorkflowExecution(ctx, wid, rid)
		require.NoError(t, err)
		raw, err := proto.Marshal(desc)
		require.NoError(t, err)
		for _, s := range secretList {
			require.False(t, bytes.Contains(raw, []byte(s)), "%s: description (memo, summaries) holds a secret", wid)
		}
	}
	require.Greater(t, scanned, 30)
	require.GreaterOrEqual(t, masked, 3, "the secrets did reach the previews and were masked there")
	_, msgs := sessionLines(t, home, "cli:s1")
	require.Contains(t, lastAssistant(msgs), apiKey, "the journal (on disk, not in history) keeps the model's text as it was")
	require.Contains(t, logs.String(), `"level":"DEBUG"`, "debug JSON logs were captured")
	for _, s := range secretList {
		require.NotContains(t, logs.String(), s, "a log line holds a secret")
	}
}
