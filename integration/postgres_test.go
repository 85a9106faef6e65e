package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/pgstore"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/usage"
)

// splitHosts is two nanobot homes (two hosts: own HOME, own workspace) on
// one temporal-dev; with a database URL both keep their state there.
type splitHosts struct {
	dev   *testenv.DevServer
	model *modeltest.Server
	a, b  *testenv.Home
}

func newSplitHosts(t *testing.T, dbURL string, steps ...modeltest.Step) *splitHosts {
	h := &splitHosts{dev: testenv.StartDevServer(t), model: modeltest.New(steps...)}
	t.Cleanup(h.model.Close)
	// Sandbox "none": the command's witness is a file outside both workspaces, which a sandbox would keep it from writing.
	extra := map[string]any{"tools": map[string]any{"restrictToWorkspace": false, "exec": map[string]any{"sandbox": "none"}}}
	if dbURL != "" {
		extra["database"] = map[string]any{"url": dbURL}
	}
	h.a, h.b = testenv.NewHome(t, h.model.URL(), extra), testenv.NewHome(t, h.model.URL(), extra)
	return h
}

func (h *splitHosts) env(home *testenv.Home) []string {
	return home.Env(h.dev.Addr, "NANOBOT_LLM_HEARTBEAT_TIMEOUT_S=2")
}

// killedMidExec runs one turn whose exec is still running when host A is
// SIGKILLed; host B, with another HOME and workspace, resumes it. It
// returns the turn's result and how often the command ran.
func killedMidExec(t *testing.T, h *splitHosts, runs string) (protocol.TurnResult, string) {
	first, logs := startWorker(t, h.env(h.a), "--workspace")
	bus := &channels.Bus{Client: h.dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model", LLMHeartbeat: 2 * time.Second})}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := bus.Publish(ctx, protocol.Inbound{ID: "m1", SessionKey: "cli:hosts", Route: protocol.Route{Channel: "cli", ChatID: "hosts"}, Content: "run it"})
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := os.Stat(runs); return err == nil }, time.Minute, 20*time.Millisecond,
		"the command never started on host A; its log:\n%s", logs)
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_, _ = first.Process.Wait()

	_, logsB := startWorker(t, h.env(h.b), "--workspace")
	var res protocol.TurnResult
	require.NoError(t, h.dev.Client.GetWorkflow(ctx, "turn/cli:hosts", "").Get(ctx, &res), "host B's log:\n%s", logsB)
	data, err := os.ReadFile(runs)
	require.NoError(t, err)
	return res, string(data)
}

func execOnceSteps(runs string) []modeltest.Step {
	return []modeltest.Step{
		modeltest.ToolCalls(modeltest.Call{ID: "once", Name: "exec", Args: `{"command":"echo ran >> ` + runs + `; sleep 30"}`}).Usage(100, 10),
		modeltest.Text("I could not confirm the command finished.").Usage(120, 12),
	}
}

func roles(msgs []chat.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Role)
	}
	return out
}

// TestPostgresStoreHoldsAClaimAcrossHosts: killedMidExec on one database.
// The claim A wrote is in PostgreSQL, so B reports the outcome as unknown
// instead of running the command again; the journal and usage read from
// the database are whole, and neither HOME holds session or usage files.
func TestPostgresStoreHoldsAClaimAcrossHosts(t *testing.T) {
	url := pgtest.Database(t)
	runs := filepath.Join(t.TempDir(), "runs.txt") // outside both workspaces: the side effect's witness
	h := newSplitHosts(t, url, execOnceSteps(runs)...)
	res, ran := killedMidExec(t, h, runs)
	require.Equal(t, protocol.StopCompleted, res.StopReason)
	require.Equal(t, "ran\n", ran, "the command ran exactly once, across hosts")

	ctx := context.Background()
	db, err := pgstore.Open(ctx, url, nil)
	require.NoError(t, err)
	defer db.Close()
	sess, err := db.Sessions().Load(ctx, "cli:hosts")
	require.NoError(t, err)
	require.Equal(t, []string{chat.RoleUser, chat.RoleAssistant, chat.RoleTool, chat.RoleAssistant}, roles(sess.Messages), "the journal, read from PostgreSQL")
	require.Contains(t, sess.Messages[2].Content, "outcome unknown")
	require.Equal(t, "I could not confirm the command finished.", sess.Messages[3].Content)
	recs, _, err := db.Usage().Since(time.Time{})
	require.NoError(t, err)
	require.Len(t, recs, 2, "one usage row per model call")
	require.Equal(t, 2, h.model.Count(), "the first model call was not asked again on host B")
	for _, home := range []*testenv.Home{h.a, h.b} {
		_, err := os.Stat(filepath.Join(filepath.Dir(home.ConfigPath), "sessions"))
		require.ErrorIs(t, err, os.ErrNotExist, "no session files in %s", home.Dir)
		_, err = os.Stat(filepath.Join(filepath.Dir(home.ConfigPath), "usage"))
		require.ErrorIs(t, err, os.ErrNotExist, "no usage file in %s", home.Dir)
	}

	// Host B's CLI reads the same database.
	out, stderr, code := runNanobot(t, h.env(h.b), "usage", "--json")
	require.Equal(t, 0, code, stderr)
	var rep usage.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Equal(t, usage.Totals{Calls: 2, Turns: 1, Prompt: 220, Completion: 22}, rep.Total)
	out, stderr, code = runNanobot(t, h.env(h.a), "db", "status")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `0001\s+init\s+applied`, out)
	out, _, _ = runNanobot(t, h.env(h.a), "status")
	require.Contains(t, out, "answering, schema up to date")
}

// TestSplitDisksBreakTheSameRun is the negative control: the same run on
// the JSONL files of two homes does not hold together (host B finds no
// claim or no journal), so the test above detects split disks.
func TestSplitDisksBreakTheSameRun(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs.txt")
	h := newSplitHosts(t, "", execOnceSteps(runs)...)
	res, ran := killedMidExec(t, h, runs)
	var got []string
	if f, err := os.Open(filepath.Join(filepath.Dir(h.b.ConfigPath), "sessions")); err == nil {
		f.Close()
		_, msgs := sessionLines(t, h.b, "cli:hosts")
		got = roles(msgs)
	}
	whole := res.StopReason == protocol.StopCompleted && ran == "ran\n" &&
		strings.Join(got, ",") == "user,assistant,tool,assistant"
	require.False(t, whole, "split disks went unnoticed: stop %s, runs %q, host B's journal %v", res.StopReason, ran, got)
	t.Logf("split disks: stop %s, the command ran %d time(s), host B's journal %v", res.StopReason, strings.Count(ran, "ran"), got)
}
