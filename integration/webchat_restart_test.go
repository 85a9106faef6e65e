package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// webHistory is what /api/history answers.
type webHistory struct {
	Messages []struct{ Role, Text string }
	Turn     struct {
		Running bool
		State   string
	}
}

func getHistory(t *testing.T, base, chat string) (webHistory, error) {
	t.Helper()
	resp, err := http.Get(base + "api/history?chat=" + chat)
	if err != nil {
		return webHistory{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return webHistory{}, fmt.Errorf("%d %s", resp.StatusCode, b)
	}
	var h webHistory
	return h, json.Unmarshal(b, &h)
}

// TestWebChatAcrossAGatewayRestart: the gateway serving the page stops
// mid-turn; a worker finishes the turn; the page, reopened on the next
// gateway, finds the turn's reply in the journal and the message asked once.
func TestWebChatAcrossAGatewayRestart(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New(modeltest.Block().Text("Here is the answer.")).
		Handle(func(*modeltest.RecordedRequest) modeltest.Step { return modeltest.Text("Here is the answer.") })
	defer model.Close()
	port := testenv.FreePort(t)
	home := testenv.NewHome(t, model.URL(), map[string]any{
		"channels": map[string]any{"web": map[string]any{"enabled": true, "port": port}},
	})
	env := home.Env(dev.Addr, "NANOBOT_STOP_TIMEOUT_S=1", "NANOBOT_LLM_HEARTBEAT_TIMEOUT_S=2")
	startWorker(t, env)
	base := fmt.Sprintf("http://127.0.0.1:%d/", port)
	gw, out, errOut := startNanobot(t, env, "gateway")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "Chat:     "+base) },
		time.Minute, 50*time.Millisecond, "%s\n%s", out, errOut)

	resp, err := http.Post(base+"api/send", "application/json", strings.NewReader(`{"chat":"restart","text":"what is the answer?"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Eventually(t, func() bool { return model.Waiting() == 1 }, time.Minute, 50*time.Millisecond, "%s\n%s", out, errOut)
	h, err := getHistory(t, base, "restart")
	require.NoError(t, err)
	require.True(t, h.Turn.Running, "the page sees the turn running")

	require.NoError(t, gw.Process.Signal(syscall.SIGTERM))
	_, _ = gw.Process.Wait()
	model.Release()

	_, out2, errOut2 := startNanobot(t, env, "gateway")
	require.Eventually(t, func() bool {
		h, err = getHistory(t, base, "restart")
		return err == nil && !h.Turn.Running && len(h.Messages) > 0 && h.Messages[len(h.Messages)-1].Text == "Here is the answer."
	}, 2*time.Minute, 100*time.Millisecond, "the reopened page finds the reply in the journal\n%s\n%s", out2, errOut2)
	asked := 0
	for _, m := range h.Messages {
		if m.Role == "user" && m.Text == "what is the answer?" {
			asked++
		}
	}
	require.Equal(t, 1, asked, "the message was taken once")

	sresp, err := http.Get(base + "api/sessions")
	require.NoError(t, err)
	defer sresp.Body.Close()
	var list struct {
		Sessions []struct{ Chat, Title string }
	}
	require.NoError(t, json.NewDecoder(sresp.Body).Decode(&list))
	require.Equal(t, "restart", list.Sessions[0].Chat)
	require.Equal(t, "what is the answer?", list.Sessions[0].Title)
}
