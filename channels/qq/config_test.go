package qq

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

func qqConfig(t *testing.T, block string) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Path = "config.json"
	cfg.Channels.Other = map[string]json.RawMessage{"qq": json.RawMessage(block)}
	return cfg
}

// nanobot's block reads unchanged, over nanobot's defaults.
func TestConfigIsNanobots(t *testing.T) {
	c, err := channels.ValidBlock(qqConfig(t, `{"enabled":true,"app_id":"1","secret":"s","allow_from":["x"]}`), Name, defaults)
	require.NoError(t, err)
	require.Equal(t, "1", c.AppID, "snake_case as nanobot writes it")
	require.Equal(t, []string{"x"}, c.AllowFrom)
	require.Equal(t, "plain", c.MsgFormat)
	require.Equal(t, "⏳ Processing...", c.AckMessage)
	require.Equal(t, defaultAPIBase, c.apiBase())
	require.Equal(t, defaultAuthBase, c.authBase())

	spec, ok := channels.Lookup(Name)
	require.True(t, ok)
	require.Equal(t, []string{"channels.qq.appId", "channels.qq.secret"}, spec.Missing(qqConfig(t, `{"enabled":true}`)))
	_, err = spec.Check(qqConfig(t, `{"msgFormat":"html"}`))
	require.ErrorContains(t, err, `channels.qq.msgFormat "html" is not "plain" or "markdown" (config.json)`)
	_, err = spec.Check(qqConfig(t, `{"apiBase":"not a url"}`))
	require.ErrorContains(t, err, "channels.qq.apiBase")
	w, err := spec.Check(qqConfig(t, `{"appId":"1","mediaDir":"/tmp","downloadChunkSize":1024}`))
	require.NoError(t, err)
	require.Len(t, w, 2, "every nanobot key is known; the two this build does not use say so")
	require.Equal(t, "channels.qq.downloadChunkSize", w[0].Key)
	require.Contains(t, w[1].String(), "channels.qq.mediaDir: has no effect in this build")
}
