package mattermost

import (
	"testing"

	"github.com/nanobot-durable/nanobot/channels/channeltest"
)

func TestEveryKeyIsReadOrUnused(t *testing.T) {
	channeltest.EveryKeyIsReadOrUnused(t, Name, Config{},
		"channels.mattermost.enabled", "channels.mattermost.serverUrl", "channels.mattermost.token", "channels.mattermost.teamId",
		"channels.mattermost.allowFrom", "channels.mattermost.allowFromMatchMode", "channels.mattermost.groupPolicy",
		"channels.mattermost.groupPolicyInThread", "channels.mattermost.groupAllowFrom", "channels.mattermost.replyInThread",
		"channels.mattermost.includeThreadContext", "channels.mattermost.threadContextLimit", "channels.mattermost.streaming",
		"channels.mattermost.reactEmoji", "channels.mattermost.doneEmoji",
		"channels.mattermost.dm.enabled", "channels.mattermost.dm.policy", "channels.mattermost.dm.allowFrom")
}
