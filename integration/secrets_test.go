package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestSecretsNeverLeak runs turns with a provider key — one answered, one
// refused with a message that echoes the key — and scans every workflow
// history, the worker's log, the error reply and `nanobot status` for the
// key and the bot token. Config and session files must be 0600, their
// folders 0700.
func TestSecretsNeverLeak(t *testing.T) {
	const key = "sk-LEAKCHECK-0123456789abcdefABCDEF"
	const token = "123456:TOKEN-LEAKCHECK-abcdefghijklmnop"
	dev := testenv.StartDevServer(t)
	model := modeltest.New(
		modeltest.Text("fine"),
		modeltest.Error(401, "invalid_api_key", "Incorrect API key provided: "+key+". Find your key at the dashboard."),
	).RequireKey(key)
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), map[string]any{
		"providers": map[string]any{"custom": map[string]any{"apiKey": key, "apiBase": model.URL()}},
		"channels":  map[string]any{"telegram": map[string]any{"enabled": false, "token": token}},
	})
	env := home.Env(dev.Addr, "NANOBOT_LOG_LEVEL=debug")
	_, logs := startWorker(t, env)
	const queue = "secrets-replies"
	startRecordingChannel(t, dev.Client, queue)
	bus := &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model", Stream: true})}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var replies []string
	for _, chat := range []string{"ok", "refused"} {
		_, err := bus.Publish(ctx, protocol.Inbound{ID: chat, SessionKey: "cli:" + chat, Route: protocol.Route{Channel: "cli", ChatID: chat, Queue: queue}, Content: "hi", SentAt: time.Now()})
		require.NoError(t, err)
		var res protocol.TurnResult
		require.NoError(t, dev.Client.GetWorkflow(ctx, protocol.TurnWorkflowID("cli:"+chat), "").Get(ctx, &res))
		replies = append(replies, res.ReplyPreview)
	}
	require.Equal(t, "fine", replies[0])
	require.Contains(t, replies[1], "Incorrect API key provided", "the refusal says why")

	status, statusErr, _ := runNanobot(t, env, "status")
	scanned := map[string]string{"worker log": logs.String(), "error reply": replies[1], "nanobot status": status + statusErr}
	list, err := dev.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{})
	require.NoError(t, err)
	require.NotEmpty(t, list.GetExecutions())
	for _, e := range list.GetExecutions() {
		h := testenv.History(t, dev.Client, e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId())
		data, err := temporalproto.CustomJSONMarshalOptions{}.Marshal(h)
		require.NoError(t, err)
		scanned["history of "+e.GetExecution().GetWorkflowId()] = string(data)
	}
	for where, text := range scanned {
		for _, secret := range []string{key, token, key[len(key)-12:], token[len(token)-12:]} {
			require.NotContains(t, text, secret, "a secret in the %s", where)
		}
	}

	// Files holding keys or conversations are the user's alone.
	mode := func(p string) os.FileMode {
		st, err := os.Stat(p)
		require.NoError(t, err)
		return st.Mode().Perm()
	}
	sessions := filepath.Dir(sessionPath(t, home, "cli:ok"))
	require.Equal(t, os.FileMode(0o700), mode(sessions), sessions)
	entries, err := os.ReadDir(sessions)
	require.NoError(t, err)
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".jsonl") {
			require.Equal(t, os.FileMode(0o600), mode(filepath.Join(sessions, e.Name())), e.Name())
		}
	}
	fresh := t.TempDir()
	freshEnv := append(home.Env(dev.Addr), "HOME="+fresh)
	_, errOut, code := runNanobot(t, freshEnv, "onboard")
	require.Zero(t, code, errOut)
	require.Equal(t, os.FileMode(0o700), mode(filepath.Join(fresh, ".nanobot")))
	require.Equal(t, os.FileMode(0o600), mode(filepath.Join(fresh, ".nanobot", "config.json")))
}
