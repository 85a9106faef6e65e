package teams

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
)

// TestNanobotBlockReads: the block nanobot writes (every key of its
// MSTeamsConfig, snake_case too) reads without a warning, over our defaults.
func TestNanobotBlockReads(t *testing.T) {
	cfg := channeltest.ConfigWith(t, Name, `{"enabled":true,"app_id":"app","appPassword":"pw","tenantId":"","host":"0.0.0.0","port":3978,
		"path":"/api/messages","allowFrom":["aad-1"],"replyInThread":true,"mentionOnlyResponse":"Hi","validateInboundAuth":true,
		"refTtlDays":30,"pruneWebChatRefs":true,"pruneNonPersonalRefs":true,"refTouchIntervalS":300,"trustedServiceUrlHosts":["smba.trafficmanager.net"]}`)
	warnings, err := channels.CheckConfig(cfg)
	require.NoError(t, err)
	require.Empty(t, warnings)
	c, err := channels.ValidBlock(cfg, Name, defaults)
	require.NoError(t, err)
	require.Equal(t, "app", c.AppID)
	require.Equal(t, "mention", c.GroupPolicy)
	require.True(t, c.Streaming)
	require.Equal(t, "https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token", c.tokenURL())
	require.Equal(t, []string{"channels.msteams.appId", "channels.msteams.appPassword"}, Config{}.Lacking())

	// A pruning setting other than nanobot's is read and said to do nothing here.
	cfg = channeltest.ConfigWith(t, Name, `{"enabled":true,"appId":"app","appPassword":"pw","refTtlDays":7,"pruneNonPersonalRefs":false}`)
	warnings, err = channels.CheckConfig(cfg)
	require.NoError(t, err)
	require.Len(t, warnings, 2)
	for _, w := range warnings {
		require.Contains(t, w.String(), "has no effect in this build")
	}
}

// TestBadBlocksNameTheirKey: a bad value names its key and the file; an
// endpoint off loopback without the JWT check is refused as unsafe.
func TestBadBlocksNameTheirKey(t *testing.T) {
	channeltest.CheckBlocks(t, Name, map[string]string{
		`{"groupPolicy":"everyone"}`:     "channels.msteams.groupPolicy",
		`{"path":"api"}`:                 "channels.msteams.path",
		`{"openIdMetadata":"not a url"}`: "channels.msteams.openIdMetadata",
		`{"port":70000}`:                 "channels.msteams.port",
	}, nil)
	cfg := channeltest.ConfigWith(t, Name, `{"enabled":true,"appId":"a","appPassword":"p","host":"0.0.0.0","validateInboundAuth":false}`)
	_, err := New(channels.Deps{Config: cfg})
	require.ErrorContains(t, err, "channels.msteams.validateInboundAuth")
	built := channels.Build(cfg, channels.Deps{Config: cfg}, map[string]bool{Name: true})
	require.Len(t, built.Refused, 1, "the gateway does not start with it")
}
