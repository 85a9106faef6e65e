package signal

import (
	"testing"

	"github.com/nanobot-durable/nanobot/channels/channeltest"
)

func TestEveryKeyIsReadOrUnused(t *testing.T) {
	channeltest.EveryKeyIsReadOrUnused(t, Name, Config{},
		"channels.signal.enabled", "channels.signal.phoneNumber", "channels.signal.daemonHost", "channels.signal.daemonPort",
		"channels.signal.groupMessageBufferSize", "channels.signal.attachmentsDir",
		"channels.signal.dm.enabled", "channels.signal.dm.policy", "channels.signal.dm.allowFrom",
		"channels.signal.group.enabled", "channels.signal.group.policy", "channels.signal.group.allowFrom", "channels.signal.group.requireMention")
}
