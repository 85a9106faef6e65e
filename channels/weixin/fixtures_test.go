package weixin

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/weixin/weixinpeer"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Users the tests talk as.
const (
	alice = "alice@im.wechat"
	room  = "family@chatroom"
)

func init() {
	minBackoff, maxBackoff, expiredRecheck = 20*time.Millisecond, 100*time.Millisecond, 50*time.Millisecond
}

// harness is the channel polling a weixinpeer, publishing into a list
// where the manager would be.
type harness struct {
	*channeltest.Run[*Channel]
	peer *weixinpeer.Peer
	dir  string // the state dir
}

// blockFor is channels.weixin over the peer's URLs and stateDir.
func blockFor(peer *weixinpeer.Peer, dir string, block map[string]any) map[string]any {
	return channeltest.Merge(map[string]any{"enabled": true, "baseUrl": peer.URL(), "cdnBaseUrl": peer.CDNURL(),
		"allowFrom": []string{"*"}, "stateDir": dir}, block)
}

// configFor is a config with blockFor in a home of its own.
func configFor(t *testing.T, peer *weixinpeer.Peer, dir string, block map[string]any) *config.Config {
	return channeltest.NewEnv(t, Name, blockFor(peer, dir, block)).Config
}

// loggedIn writes the account.json a QR login leaves.
func loggedIn(t *testing.T, peer *weixinpeer.Peer, dir string) {
	t.Helper()
	require.NoError(t, saveAccount(dir, account{Token: weixinpeer.Token, BaseURL: peer.URL(), BotID: weixinpeer.BotID}))
}

// startHarness logs in against a new peer and starts the channel.
func startHarness(t *testing.T, block map[string]any) *harness {
	t.Helper()
	peer := weixinpeer.New(t)
	dir := t.TempDir()
	loggedIn(t, peer, dir)
	return startOn(t, peer, dir, block)
}

func startOn(t *testing.T, peer *weixinpeer.Peer, dir string, block map[string]any) *harness {
	t.Helper()
	h := &harness{Run: channeltest.Start(t, channeltest.NewEnv(t, Name, blockFor(peer, dir, block)), New), peer: peer, dir: dir}
	require.Eventually(t, peer.Connected, 10*time.Second, 10*time.Millisecond, "the bot never polled")
	return h
}

// sync sends a DM and waits for it: messages are handled in order, so
// everything sent before was handled (taken or dropped) too.
func (h *harness) sync() protocol.Inbound {
	h.T.Helper()
	return h.WaitLast("weixin:" + h.peer.Say(weixinpeer.Message{From: alice, Text: "sync"}))
}

// reply is a turn's answer to a message in a chat.
func reply(chat, turn, text string) channels.Reply {
	return channels.Reply{ID: turn + "#a", Route: protocol.Route{Channel: Name, ChatID: chat},
		Turn: turn, Text: text, Kind: protocol.ReplyAnswer}
}

// fileMode is the permission bits of a file.
func fileMode(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	return st.Mode().Perm()
}

// requireMedia checks that msg carries one saved file holding want.
func requireMedia(t *testing.T, msg protocol.Inbound, want []byte) {
	t.Helper()
	require.Len(t, msg.Media, 1)
	data, err := os.ReadFile(msg.Media[0])
	require.NoError(t, err)
	require.Equal(t, want, data)
}
