package weixin

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/weixin/weixinpeer"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
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
	t    *testing.T
	peer *weixinpeer.Peer
	ch   *Channel
	logs *testenv.SyncBuffer
	dir  string // the state dir
	deps channels.Deps

	stop func()
	// down makes publishing fail, as when Temporal cannot be reached.
	down atomic.Bool

	*channeltest.Publisher
}

// configFor is a config with channels.weixin (block over the peer's URLs
// and stateDir) in a home of its own.
func configFor(t *testing.T, peer *weixinpeer.Peer, dir string, block map[string]any) *config.Config {
	t.Helper()
	b := map[string]any{"enabled": true, "baseUrl": peer.URL(), "cdnBaseUrl": peer.CDNURL(),
		"allowFrom": []string{"*"}, "stateDir": dir}
	for k, v := range block {
		b[k] = v
	}
	raw, err := json.Marshal(b)
	require.NoError(t, err)
	return channeltest.ConfigWith(t, Name, string(raw))
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
	logs := &testenv.SyncBuffer{}
	deps := channels.Deps{Config: configFor(t, peer, dir, block), Workspace: t.TempDir(),
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	ch, err := New(deps)
	require.NoError(t, err)
	h := &harness{t: t, peer: peer, ch: ch, logs: logs, dir: dir, deps: deps, Publisher: channeltest.NewPublisher(t)}
	ctx, cancel := context.WithCancel(context.Background())
	publish := func(ctx context.Context, msg protocol.Inbound, admitted channels.Admitted) error {
		if h.down.Load() {
			return errors.New("temporal unreachable")
		}
		return h.Publish(ctx, msg, admitted)
	}
	require.NoError(t, ch.Start(ctx, publish))
	stopped := false
	h.stop = func() {
		if stopped {
			return
		}
		stopped = true
		stopCtx, done := context.WithTimeout(context.Background(), 10*time.Second)
		defer done()
		require.NoError(t, ch.Stop(stopCtx))
		cancel()
	}
	t.Cleanup(func() {
		h.stop()
		if t.Failed() {
			t.Logf("channel log:\n%s", logs.String())
		}
	})
	require.Eventually(t, peer.Connected, 10*time.Second, 10*time.Millisecond, "the bot never polled")
	return h
}

// sync sends a DM and waits for it: messages are handled in order, so
// everything sent before was handled (taken or dropped) too.
func (h *harness) sync() protocol.Inbound {
	h.t.Helper()
	n := len(h.Published())
	id := h.peer.Say(weixinpeer.Message{From: alice, Text: "sync"})
	got := h.WaitPublished(n + 1)
	require.Equal(h.t, "weixin:"+id, got[len(got)-1].ID, "the sync message comes last")
	return got[len(got)-1]
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
