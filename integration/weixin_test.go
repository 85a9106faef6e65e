package integration

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/weixin/weixinpeer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// Users of the WeChat conversation.
const (
	wxAlice     = "alice@im.wechat"
	wxBob       = "bob@im.wechat"
	wxFamily    = "family@chatroom"
	wxStrangers = "strangers@chatroom"
)

// weixinLoggedIn is a home with WeChat enabled against the peer (Alice
// and the family group allowed), logged in by `nanobot channels login weixin`.
func weixinLoggedIn(t *testing.T, dev *testenv.DevServer, peer *weixinpeer.Peer, model *modeltest.Server) (*testenv.Home, []string) {
	t.Helper()
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"weixin": map[string]any{
		"enabled": true, "baseUrl": peer.URL(), "cdnBaseUrl": peer.CDNURL(), "allowFrom": []string{wxAlice, wxFamily}}}})
	env := home.Env(dev.Addr)
	login, out, errOut := startNanobot(t, env, "channels", "login", "weixin")
	require.Eventually(t, func() bool { return peer.QRCodes() == 1 && strings.Contains(out.String(), "█") },
		time.Minute, 50*time.Millisecond, "no QR code in the terminal\n%s\n%s", out, errOut)
	peer.ConfirmScan()
	require.NoError(t, login.Wait(), "the login ends once the scan is confirmed\n%s\n%s", out, errOut)
	require.Contains(t, out.String(), "WeChat login confirmed")
	return home, env
}

// TestWeixinGatewayConversation drives the real binary through
// weixinpeer: `nanobot channels login weixin` prints a QR code and stores
// the confirmed token (0600); the gateway polls with it; a DM is answered
// as plain text with the user's context token and typing shown; an
// allowed group is answered, a group not allowed is not (and gets no
// pairing code), an unknown DM sender gets one; an expired session is
// reported with the login to run.
func TestWeixinGatewayConversation(t *testing.T) {
	dev := testenv.StartDevServer(t)
	peer := weixinpeer.New(t)
	model := modeltest.New().Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case strings.Contains(last.Content, "hi from wechat"):
			return modeltest.Text("Hello, **WeChat**.")
		case strings.Contains(last.Content, "family news"):
			return modeltest.Text("Everyone is fine.")
		}
		return modeltest.Text("Hello again.")
	})
	defer model.Close()
	home, env := weixinLoggedIn(t, dev, peer, model)
	state := filepath.Join(filepath.Dir(home.ConfigPath), "weixin", "account.json")
	st, err := os.Stat(state)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	first, out1, err1 := startNanobot(t, env, "gateway")
	logs := outputs{out1, err1}
	require.Eventually(t, func() bool { return strings.Contains(out1.String(), "  weixin: ") }, time.Minute, 50*time.Millisecond,
		"the gateway did not start weixin\n%s", logs)
	require.Eventually(t, peer.Connected, time.Minute, 50*time.Millisecond, "the gateway never polled\n%s", logs)

	peer.Say(weixinpeer.Message{From: wxAlice, Text: "hi from wechat"})
	require.Eventually(t, func() bool {
		s := peer.Sent(wxAlice)
		return len(s) == 1 && s[0].Text == "Hello, WeChat."
	}, time.Minute, 50*time.Millisecond, "no answer to the DM\n%s", logs)
	require.Equal(t, "ctx-"+wxAlice, peer.Sent(wxAlice)[0].ContextToken)
	require.NotEmpty(t, peer.Typing(), "typing was shown")
	requireChannelsUp(t, env, "weixin")

	peer.Say(weixinpeer.Message{From: wxStrangers, Text: "anyone?"})
	peer.Say(weixinpeer.Message{From: wxBob, Text: "who are you"})
	peer.Say(weixinpeer.Message{From: wxFamily, Text: "family news?"})
	require.Eventually(t, func() bool {
		s := peer.Sent(wxFamily)
		return len(s) == 1 && s[0].Text == "Everyone is fine."
	}, time.Minute, 50*time.Millisecond, "no answer in the allowed group\n%s", logs)
	require.Eventually(t, func() bool {
		s := peer.Sent(wxBob)
		return len(s) == 1 && strings.Contains(s[0].Text, "pairing code")
	}, time.Minute, 50*time.Millisecond, "an unknown DM sender gets a pairing code\n%s", logs)
	require.Empty(t, peer.Sent(wxStrangers), "a group not allowed is left alone")
	require.Equal(t, 2, model.Count(), "the DM and the allowed group reached the model")

	// A restart polls from the stored cursor: what came while it was down is answered, nothing twice.
	require.NoError(t, first.Process.Signal(syscall.SIGTERM))
	_, _ = first.Process.Wait()
	peer.Say(weixinpeer.Message{From: wxAlice, Text: "are you back?"})
	logs = startChannelGateway(t, env, "weixin")
	require.Eventually(t, func() bool {
		s := peer.Sent(wxAlice)
		return len(s) == 2 && s[1].Text == "Hello again."
	}, time.Minute, 50*time.Millisecond, "no answer to the message sent while the gateway was down\n%s", logs)
	require.Equal(t, 3, model.Count(), "nothing handled before the restart reached the model again")
	require.Len(t, peer.Sent(wxFamily), 1)
	require.Len(t, peer.Sent(wxBob), 1)

	peer.Expire("a-newer-token")
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "nanobot channels login weixin") },
		time.Minute, 50*time.Millisecond, "the expired session is reported\n%s", logs)
}

// TestWeixinGatewayResumesAfterAFailedPoll: a long poll fails (502); the
// channel backs off and polls again; the server replays the last message
// and a new one comes: the new one is answered, the replayed one not again.
func TestWeixinGatewayResumesAfterAFailedPoll(t *testing.T) {
	dev := testenv.StartDevServer(t)
	peer := weixinpeer.New(t)
	model := answering(map[string]string{"before the drop": "Before.", "after the drop": "After."})
	defer model.Close()
	_, env := weixinLoggedIn(t, dev, peer, model)
	logs := startChannelGateway(t, env, "weixin")
	texts := func() []string {
		var out []string
		for _, s := range peer.Sent(wxAlice) {
			out = append(out, s.Text)
		}
		return out
	}

	peer.Say(weixinpeer.Message{From: wxAlice, Text: "before the drop"})
	require.Eventually(t, func() bool { return len(texts()) == 1 }, time.Minute, 50*time.Millisecond, "no answer before the drop\n%s", logs)
	peer.Fail("getupdates", http.StatusBadGateway)
	require.Eventually(t, func() bool { return peer.Calls("getupdates") > len(peer.Polls()) }, time.Minute, 50*time.Millisecond,
		"no poll failed\n%s", logs)
	polled := len(peer.Polls())
	require.Eventually(t, func() bool { return len(peer.Polls()) > polled }, time.Minute, 50*time.Millisecond,
		"the channel never polled again\n%s", logs)
	require.Contains(t, logs.String(), "weixin poll failed")

	peer.Redeliver(0)
	peer.Say(weixinpeer.Message{From: wxAlice, Text: "after the drop"})
	require.Eventually(t, func() bool { return len(texts()) >= 2 }, time.Minute, 50*time.Millisecond, "no answer after the drop\n%s", logs)
	require.Equal(t, []string{"Before.", "After."}, texts(), "one answer per message")
	require.Equal(t, 2, model.Count(), "the replayed message never reached the model again")
}
