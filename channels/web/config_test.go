package web

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/config"
)

// editBlock changes channels.web of cfg through its typed block.
func editBlock(t *testing.T, cfg *config.Config, edit func(*Config)) {
	channeltest.EditBlock(t, cfg, Name, defaults, edit)
}

func TestConfigDefaults(t *testing.T) {
	c, err := ReadConfig(config.Default())
	require.NoError(t, err)
	require.Equal(t, Config{Host: "127.0.0.1", Port: 18790}, c)
}

func TestWebEnabledDefaultsByProcess(t *testing.T) {
	cfg, _ := channeltest.LoadFile(t, `{}`)
	c, err := ReadConfig(cfg)
	require.NoError(t, err)
	require.True(t, c.EnabledOr(true))
	require.False(t, c.EnabledOr(false))
	cfg, _ = channeltest.LoadFile(t, `{"channels": {"web": {"enabled": false, "token": "t"}}}`)
	c, err = ReadConfig(cfg)
	require.NoError(t, err)
	require.False(t, c.EnabledOr(true))
	require.Equal(t, "t", c.Token)
}

func TestFileErrors(t *testing.T) {
	for name, tt := range map[string]struct{ file, err string }{
		"web port":    {`{"channels": {"web": {"port": 70000}}}`, `channels.web.port: 70000 is not a TCP port (0–65535)`},
		"web host":    {`{"channels": {"web": {"host": " "}}}`, `channels.web.host: empty: use 127.0.0.1 (this machine only) or an address to listen on`},
		"web enabled": {`{"channels": {"web": {"enabled": "yes"}}}`, `channels.web.enabled: want a boolean, got string "yes"`},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, path := channeltest.LoadFile(t, tt.file)
			_, err := channels.CheckConfig(cfg)
			require.Error(t, err)
			require.Equal(t, "config "+path+": "+tt.err, err.Error())
			var ce *config.Error
			require.ErrorAs(t, err, &ce)
		})
	}
}

func TestEveryKeyIsReadOrUnused(t *testing.T) {
	channeltest.EveryKeyIsReadOrUnused(t, Name, Config{},
		"channels.web.enabled", "channels.web.host", "channels.web.port", "channels.web.token", "channels.web.allowedHosts")
}
