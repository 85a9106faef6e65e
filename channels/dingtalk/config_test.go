package dingtalk

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
)

func TestConfigReadsNanobotsBlock(t *testing.T) {
	// nanobot's own dump of the block: snake_case keys.
	cfg := channeltest.ConfigWith(t, Name, `{"enabled":true,"client_id":"app","client_secret":"secret","allow_from":["staff1"],
		"allow_remote_media_redirects":false,"remote_media_redirect_allowed_hosts":[],"group_user_isolation":true,
		"disable_private_chat":false}`)
	c, err := readConfig(cfg)
	require.NoError(t, err)
	require.Equal(t, "app", c.ClientID)
	require.True(t, c.GroupUserIsolation)
	w, err := channels.CheckValidBlock(Name, defaults)(cfg)
	require.NoError(t, err)
	require.Empty(t, w)

	spec, ok := channels.Lookup(Name)
	require.True(t, ok)
	require.True(t, spec.Enabled(cfg))
	require.Empty(t, spec.Missing(cfg))
	require.True(t, channels.AllowFromFor(cfg, Name).Allows("staff1"))
	require.False(t, channels.AllowFromFor(cfg, Name).Allows("staff2"))
	api, oapi := c.bases()
	require.Equal(t, "https://api.dingtalk.com", api)
	require.Equal(t, "https://oapi.dingtalk.com", oapi)
}

func TestConfigDefaults(t *testing.T) {
	cfg := channeltest.ConfigWith(t, Name, `{"enabled":true}`)
	c, err := readConfig(cfg)
	require.NoError(t, err)
	require.Equal(t, Config{Enabled: true}, c)
	spec, _ := channels.Lookup(Name)
	require.Equal(t, []string{"channels.dingtalk.clientId", "channels.dingtalk.clientSecret"}, spec.Missing(cfg))
	require.False(t, channels.AllowFromFor(cfg, Name).Allows("staff1"), "no allowFrom: nobody but paired senders")
	c.APIBase = "http://127.0.0.1:9/"
	api, oapi := c.bases()
	require.Equal(t, "http://127.0.0.1:9", api)
	require.Equal(t, api, oapi, "apiBase stands for both hosts")
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	channeltest.CheckBlocks(t, Name, map[string]string{
		`{"apiBase":"not a url"}`:      "channels.dingtalk.apiBase",
		`{"apiBase":"ftp://x"}`:        "channels.dingtalk.apiBase",
		`{"allowFrom":"staff1"}`:       "channels.dingtalk.allowFrom",
		`{"groupUserIsolation":"yes"}`: "channels.dingtalk.groupUserIsolation",
		`{"clientId":123}`:             "channels.dingtalk.clientId",
	}, map[string]string{`{"clientSecrett":"x"}`: "channels.dingtalk.clientSecrett"})
}
