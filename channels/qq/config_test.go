package qq

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
)

// nanobot's block reads unchanged, over nanobot's defaults.
func TestConfigIsNanobots(t *testing.T) {
	c, err := channels.ValidBlock(channeltest.ConfigWith(t, Name, `{"enabled":true,"app_id":"1","secret":"s","allow_from":["x"]}`), Name, defaults)
	require.NoError(t, err)
	require.Equal(t, "1", c.AppID, "snake_case as nanobot writes it")
	require.Equal(t, []string{"x"}, c.AllowFrom)
	require.Equal(t, "plain", c.MsgFormat)
	require.Equal(t, "⏳ Processing...", c.AckMessage)
	require.Equal(t, defaultAPIBase, c.apiBase())
	require.Equal(t, defaultAuthBase, c.authBase())

	spec, ok := channels.Lookup(Name)
	require.True(t, ok)
	require.Equal(t, []string{"channels.qq.appId", "channels.qq.secret"}, spec.Missing(channeltest.ConfigWith(t, Name, `{"enabled":true}`)))
	channeltest.CheckBlocks(t, Name, map[string]string{
		`{"msgFormat":"html"}`:    `channels.qq.msgFormat "html" is not "plain" or "markdown"`,
		`{"apiBase":"not a url"}`: "channels.qq.apiBase",
	}, nil)
	w, err := spec.Check(channeltest.ConfigWith(t, Name, `{"appId":"1","mediaDir":"/tmp","downloadChunkSize":1024}`))
	require.NoError(t, err)
	require.Len(t, w, 2, "every nanobot key is known; the two this build does not use say so")
	require.Equal(t, "channels.qq.downloadChunkSize", w[0].Key)
	require.Contains(t, w[1].String(), "channels.qq.mediaDir: has no effect in this build")
}
