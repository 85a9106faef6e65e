package integration

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/pgstore"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// startHost runs a nanobot process in a process group of its own, so a
// test can kill it with everything it started (exec's shells, MCP servers).
func startHost(t *testing.T, env []string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(testenv.NanobotBin(t), args...)
	cmd.Env = env
	logs := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { killGroup(cmd) })
	return cmd, logs
}

func killGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_, _ = cmd.Process.Wait()
}

// TestStatelessHostsAndAWorkspaceHostSurviveKills: three homes on one
// temporal-dev (itself on PostgreSQL) and one PostgreSQL database. A and B run turns and model
// calls without the workspace; W holds it. 30 sessions of two messages
// each; after a third are answered A's process group is killed and its
// HOME deleted, then W is killed mid-exec and restarted. Every message is
// answered once, each journal (read from PostgreSQL) is in order, no exec
// ran twice, usage rows are one per call, and B's HOME holds no state.
func TestStatelessHostsAndAWorkspaceHostSurviveKills(t *testing.T) {
	const sessions = 30
	url := pgtest.Database(t)
	dev := testenv.StartDevServer(t, "--db", temporalOnPostgres(t)) // Temporal on PostgreSQL too, as in production
	model := modeltest.New().Handle(slowExecModel)
	defer model.Close()
	extra := map[string]any{"database": map[string]any{"url": url}}
	a, b, w := testenv.NewHome(t, model.URL(), extra), testenv.NewHome(t, model.URL(), extra), testenv.NewHome(t, model.URL(), extra)
	env := func(h *testenv.Home) []string { return h.Env(dev.Addr, "NANOBOT_LLM_HEARTBEAT_TIMEOUT_S=2") }
	hostA, logA := startHost(t, env(a), "worker")
	_, logB := startHost(t, env(b), "worker")
	hostW, logW := startHost(t, env(w), "worker", "--workspace")
	logs := func() string { return fmt.Sprintf("A:\n%s\nB:\n%s\nW:\n%s", logA, logB, logW) }

	cfg, _, err := config.Load(a.ConfigPath)
	require.NoError(t, err)
	settings := cfg.TurnSettings()
	require.Equal(t, protocol.WorkspaceTaskQueue, settings.WorkspaceQueue, "with state in PostgreSQL, tools go to the workspace host")
	settings.LLMHeartbeat = 2 * time.Second
	const queue = "hosts-replies"
	ch := startRecordingChannel(t, dev.Client, queue)
	bus := &channels.Bus{Client: dev.Client, Settings: settings}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	ids := publishSessions(t, ctx, bus, queue, "host", sessions, 2)
	require.Eventually(t, func() bool { return len(ch.answered()) >= len(ids)/3 }, 3*time.Minute, 20*time.Millisecond,
		"a third of the messages never got answers; %s", logs())
	killGroup(hostA)
	require.NoError(t, os.RemoveAll(a.Dir), "host A's HOME is gone with it")

	counter := filepath.Join(w.Workspace, "counter.txt")
	lines := func() int { data, _ := os.ReadFile(counter); return strings.Count(string(data), "\n") }
	before := lines()
	require.Eventually(t, func() bool { return lines() > before }, 2*time.Minute, 5*time.Millisecond, "no exec started after A went; %s", logs())
	killGroup(hostW) // an exec is sleeping: W dies mid-exec
	_, logW2 := startHost(t, env(w), "worker", "--workspace")

	require.Eventually(t, func() bool { return len(ch.answered()) == len(ids) }, 4*time.Minute, 50*time.Millisecond,
		"not every message was answered after the kills (%d of %d); %s\nW after restart:\n%s", len(ch.answered()), len(ids), logs(), logW2)
	for id, n := range ch.answered() {
		require.Equal(t, 1, n, "message %s answered %d times", id, n)
	}
	for _, d := range ch.Deliveries() { // answered by the model, not by a failed turn's apology
		require.True(t, strings.HasPrefix(d.Text, "done "), "a reply was not the model's: %q", d.Text)
	}

	data, err := os.ReadFile(counter)
	require.NoError(t, err)
	runs := map[string]int{}
	for _, tag := range strings.Fields(string(data)) {
		runs[tag]++
		require.Equal(t, 1, runs[tag], "exec for %s ran twice", tag)
	}

	db, err := pgstore.Open(ctx, url, nil)
	require.NoError(t, err)
	defer db.Close()
	for s := 0; s < sessions; s++ {
		sess, err := db.Sessions().Load(ctx, fmt.Sprintf("cli:host-%d", s))
		require.NoError(t, err)
		var order []string
		for _, m := range sess.Messages {
			if m.Role == "user" {
				order = append(order, scaleTag.FindString(m.Content))
			}
		}
		require.Equal(t, []string{fmt.Sprintf("s%d-m1", s), fmt.Sprintf("s%d-m2", s)}, dedupe(order), "session %d's journal, from PostgreSQL", s)
	}
	recs, _, err := db.Usage().Since(time.Time{})
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, r := range recs {
		key := r.Session + "/" + r.Turn + "/" + r.Call
		require.False(t, seen[key], "usage row %s twice", key)
		seen[key] = true
	}
	require.NotEmpty(t, recs)

	var state []string
	require.NoError(t, filepath.WalkDir(b.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == b.ConfigPath {
			return err
		}
		state = append(state, strings.TrimPrefix(p, b.Dir))
		return nil
	}))
	require.Empty(t, state, "host B holds no state")
	unknown, results := 0, map[string]int{}
	for s := 0; s < sessions; s++ {
		sess, _ := db.Sessions().Load(ctx, fmt.Sprintf("cli:host-%d", s))
		for _, m := range sess.Messages {
			if m.Role == "tool" {
				results[chat.Preview(m.Content, 40)]++
			}
			if m.Role == "tool" && strings.Contains(m.Content, "outcome unknown") {
				unknown++
			}
		}
	}
	t.Logf("tool results: %v", results)
	t.Logf("hosts: %d messages answered once each; %d execs ran once each, %d interrupted by W's kill reported as outcome unknown; %d usage rows, none twice; answered a third before A's kill, the rest after both kills",
		len(ids), len(runs), unknown, len(recs))
}

// slowExecModel is scaleModel with an exec that sleeps, so a kill lands mid-exec.
func slowExecModel(req *modeltest.RecordedRequest) modeltest.Step { return execPerMessage(req, "0.5") }

// dedupe drops repeats that follow each other (a message journaled once per turn it joined).
func dedupe(in []string) []string {
	var out []string
	for _, s := range in {
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}
