package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

var scaleTag = regexp.MustCompile(`s\d+-m\d+`)

// scaleModel asks for one exec per user message, in the order the
// messages came, then answers "done" with the last one.
func scaleModel(req *modeltest.RecordedRequest) modeltest.Step { return execPerMessage(req, "0.1") }

// execPerMessage is scaleModel with each exec sleeping this many seconds.
func execPerMessage(req *modeltest.RecordedRequest, sleep string) modeltest.Step {
	results := map[string]bool{}
	var tags []string
	for _, m := range req.Messages {
		switch m.Role {
		case "tool":
			results[m.ToolCallID] = true
		case "user":
			if tag := scaleTag.FindString(m.Content); tag != "" {
				tags = append(tags, tag)
			}
		}
	}
	for _, tag := range tags {
		if !results[tag+"-exec"] {
			return modeltest.ToolCalls(modeltest.Call{ID: tag + "-exec", Name: "exec", Args: fmt.Sprintf(`{"command":"echo %s >> counter.txt; sleep %s"}`, tag, sleep)})
		}
	}
	if len(tags) == 0 {
		return modeltest.Text("done")
	}
	return modeltest.Text("done " + tags[len(tags)-1])
}

// TestScaleOutSurvivesAWorkerKill: two workers share 100 sessions of two
// messages each; one is SIGKILLed mid-run and not restarted. Every message
// is answered by the survivor, no exec runs twice, and each session's
// journal holds its messages in the order they were sent.
func TestScaleOutSurvivesAWorkerKill(t *testing.T) {
	const sessions = 100
	dev := testenv.StartDevServer(t)
	model := modeltest.New().Handle(scaleModel)
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	const queue = "scale-replies"
	ch := startRecordingChannel(t, dev.Client, queue)
	env := home.Env(dev.Addr)
	victim, _ := startWorker(t, env)
	_, survivorLog := startWorker(t, env)
	bus := &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model"})}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	ids := publishSessions(t, ctx, bus, queue, "scale", sessions, 2)
	require.Eventually(t, func() bool { return len(ch.answered()) >= sessions/3 }, 3*time.Minute, 20*time.Millisecond,
		"a third of the messages never got answers; survivor log:\n%s", survivorLog)
	require.NoError(t, victim.Process.Signal(syscall.SIGKILL))
	_, _ = victim.Process.Wait()

	require.Eventually(t, func() bool { return allAnswered(ch, ids) }, 4*time.Minute, 50*time.Millisecond,
		"not every message was answered after the kill; survivor log:\n%s", survivorLog)
	for id, n := range ch.answered() {
		require.Equal(t, 1, n, "%s answered %d times", id, n)
	}
	counter, err := os.ReadFile(filepath.Join(home.Workspace, "counter.txt"))
	require.NoError(t, err)
	runs := map[string]int{}
	for _, line := range strings.Fields(string(counter)) {
		runs[line]++
	}
	unknown := 0
	for s := 0; s < sessions; s++ {
		_, msgs := sessionLines(t, home, fmt.Sprintf("cli:scale-%d", s))
		var order []string
		for _, m := range msgs {
			if m.Role == "user" {
				order = append(order, scaleTag.FindString(m.Content))
			}
			if m.Role == "tool" && strings.Contains(m.Content, "outcome unknown") {
				unknown++
			}
		}
		require.Equal(t, []string{fmt.Sprintf("s%d-m1", s), fmt.Sprintf("s%d-m2", s)}, order, "session %d keeps its order", s)
	}
	for _, id := range ids {
		require.LessOrEqual(t, runs[id], 1, "exec of %s ran twice", id)
	}
	t.Logf("%d sessions, %d messages answered once each; %d exec outcomes reported unknown after the kill", sessions, len(ids), unknown)
}

// publishSessions publishes perSession messages ("s<n>-m<k>", "please …") to each of sessions
// CLI chats "<prefix>-<n>" whose replies go to queue, and returns the message ids in order.
func publishSessions(t *testing.T, ctx context.Context, bus *channels.Bus, queue, prefix string, sessions, perSession int) []string {
	t.Helper()
	var ids []string
	for s := 0; s < sessions; s++ {
		route := protocol.Route{Channel: "cli", ChatID: fmt.Sprintf("%s-%d", prefix, s), Queue: queue}
		for m := 1; m <= perSession; m++ {
			id := fmt.Sprintf("s%d-m%d", s, m)
			ids = append(ids, id)
			_, err := bus.Publish(ctx, protocol.Inbound{ID: id, SessionKey: protocol.SessionKey(route.Channel, route.ChatID), Route: route, Content: "please " + id, SentAt: time.Now()})
			require.NoError(t, err)
		}
	}
	return ids
}
