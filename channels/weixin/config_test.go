package weixin

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/weixin/weixinpeer"
	"github.com/nanobot-durable/nanobot/secrets"
)

// TestConfigReadsNanobotsBlock: nanobot's keys and defaults; routeTag as a
// string or a number; snake_case read too.
func TestConfigReadsNanobotsBlock(t *testing.T) {
	c := block(channeltest.ConfigWith(t, Name, `{"enabled": true, "allowFrom": ["a@im.wechat"], "routeTag": 7, "poll_timeout": 20}`))
	require.True(t, c.Enabled)
	require.Equal(t, "https://ilinkai.weixin.qq.com", c.BaseURL)
	require.Equal(t, "https://novac2c.cdn.weixin.qq.com/c2c", c.CDNBaseURL)
	tag, err := c.routeTag()
	require.NoError(t, err)
	require.Equal(t, "7", tag)
	require.Equal(t, 20, c.PollTimeout)
	require.Equal(t, 8, c.ContextMessageBudget)
	tag, err = block(channeltest.ConfigWith(t, Name, `{"routeTag": "blue"}`)).routeTag()
	require.NoError(t, err)
	require.Equal(t, "blue", tag)

	channeltest.CheckBlocks(t, Name, map[string]string{
		`{"enabled": true, "baseUrl": "not a url"}`: "channels.weixin.baseUrl",
		`{"routeTag": 1.5}`:                         "channels.weixin.routeTag",
	}, nil)
}

// TestNoLoginWarnsToLogIn: enabled without a login, the gateway does not
// start the channel and says which command to run.
func TestNoLoginWarnsToLogIn(t *testing.T) {
	cfg := channeltest.ConfigWith(t, Name, `{"enabled": true, "stateDir": "`+t.TempDir()+`"}`)
	built := channels.Build(cfg, channels.Deps{Config: cfg, Workspace: t.TempDir()}, map[string]bool{Name: true})
	require.Empty(t, built.Channels)
	require.Len(t, built.Warnings, 1)
	require.Contains(t, built.Warnings[0], "run: nanobot channels login weixin")
}

// TestRouteTagSent: channels.weixin.routeTag goes out as SKRouteTag.
func TestRouteTagSent(t *testing.T) {
	h := startHarness(t, map[string]any{"routeTag": 7})
	require.Positive(t, h.peer.RouteTagged("7"))
}

// TestStoredTokenMasked: the stored bot token joins the log mask before anything is logged.
func TestStoredTokenMasked(t *testing.T) {
	peer := weixinpeer.New(t)
	dir := t.TempDir()
	loggedIn(t, peer, dir)
	set := secrets.FromConfig(nil, nil)
	_, err := New(channels.Deps{Config: configFor(t, peer, dir, nil), Secrets: set})
	require.NoError(t, err)
	require.Equal(t, "token=[redacted]", set.Redact("token="+weixinpeer.Token))
}
