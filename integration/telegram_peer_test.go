package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/peer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
)

// tgEmulator is telegram-test-api (npm), started by e2e/telegram-server.js
// on a free 127.0.0.1 port: the bot side is the Bot API at URL; the test
// plays the users through its client routes.
type tgEmulator struct {
	URL   string
	Token string
}

// startTelegramEmulator runs the emulator; where e2e/node_modules lacks it
// the peer is missing (a skip locally, a failure under CI or make e2e).
func startTelegramEmulator(t *testing.T) *tgEmulator {
	t.Helper()
	root := testenv.RepoRoot(t)
	_, nodeErr := exec.LookPath("node")
	_, pkgErr := os.Stat(filepath.Join(root, "e2e", "node_modules", "telegram-test-api", "package.json"))
	if nodeErr != nil || pkgErr != nil {
		peer.Missing(t, peer.TelegramAPI, "telegram-test-api is not installed in e2e/node_modules (or node is missing): install Node.js and npm, then run make e2e (e2e/install.sh)")
	}
	port := testenv.FreePort(t)
	cmd := exec.Command("node", filepath.Join(root, "e2e", "telegram-server.js"), strconv.Itoa(port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening") {
				close(ready)
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case <-ready:
	case <-exited:
		t.Fatalf("telegram-server.js exited: %s", stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("telegram-server.js did not start: %s", stderr.String())
	}
	peer.Used(t, peer.TelegramAPI)
	return &tgEmulator{URL: "http://127.0.0.1:" + strconv.Itoa(port), Token: "123456:e2e-token"}
}

func (e *tgEmulator) post(t *testing.T, route string, body any, out any) {
	t.Helper()
	data, err := json.Marshal(body)
	require.NoError(t, err)
	resp, err := http.Post(e.URL+route, "application/json", bytes.NewReader(data))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, route)
	if out != nil {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(out))
	}
}

// tgUser is a Telegram user the test speaks as.
type tgUser struct {
	ID        int64  `json:"id"`
	FirstName string `json:"first_name"`
	Username  string `json:"username,omitempty"`
	IsBot     bool   `json:"is_bot"`
}

// say sends a message from user into a chat (private when chatType is "private").
func (e *tgEmulator) say(t *testing.T, from tgUser, chatID int64, chatType, text string) {
	t.Helper()
	chat := map[string]any{"id": chatID, "type": chatType}
	if chatType == "private" {
		chat["first_name"] = from.FirstName
	} else {
		chat["title"] = "e2e group"
	}
	e.post(t, "/sendMessage", map[string]any{
		"botToken": e.Token, "from": from, "chat": chat, "text": text, "date": time.Now().Unix(),
	}, nil)
}

// press presses a button (its callback_data) under a bot's message in a chat.
func (e *tgEmulator) press(t *testing.T, from tgUser, chatID int64, messageID int, data string) {
	t.Helper()
	e.post(t, "/sendCallback", map[string]any{
		"botToken": e.Token, "from": from, "data": data, "date": time.Now().Unix(),
		"message": map[string]any{"message_id": messageID, "date": time.Now().Unix(), "chat": map[string]any{"id": chatID, "type": "private"}},
	}, nil)
}

// botMessage is what the bot sent, as the emulator holds it now (edits applied).
type botMessage struct {
	ID        int
	ChatID    string
	Text      string
	ParseMode string
	// Markup is the message's reply_markup as JSON ("" when it has none).
	Markup string
}

// botMessages lists the bot's messages in a chat, oldest first.
func (e *tgEmulator) botMessages(t *testing.T, chatID int64) []botMessage {
	t.Helper()
	var res struct {
		OK     bool `json:"ok"`
		Result []struct {
			MessageID int            `json:"messageId"`
			Message   map[string]any `json:"message"`
		} `json:"result"`
	}
	e.post(t, "/getUpdatesHistory", map[string]any{"token": e.Token}, &res)
	require.True(t, res.OK)
	var out []botMessage
	want := strconv.FormatInt(chatID, 10)
	for _, item := range res.Result {
		raw, isBot := item.Message["chat_id"] // the user's messages carry a chat object instead
		if !isBot || toString(raw) != want {
			continue
		}
		out = append(out, botMessage{
			ID: item.MessageID, ChatID: want,
			Text: toString(item.Message["text"]), ParseMode: toString(item.Message["parse_mode"]),
			Markup: toString(item.Message["reply_markup"]),
		})
	}
	return out
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case nil:
		return ""
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// startChannelGateway runs `nanobot gateway` until the test ends and waits
// for its banner to name the channel.
func startChannelGateway(t *testing.T, env []string, channel string) outputs {
	t.Helper()
	_, out, errOut := startNanobot(t, env, "gateway")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "  "+channel+": ") }, time.Minute, 50*time.Millisecond,
		"gateway did not start %s:\n%s\n%s", channel, out, errOut)
	return outputs{out, errOut}
}
