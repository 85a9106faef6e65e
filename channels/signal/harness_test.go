package signal

import (
	"testing"

	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/signal/signalpeer"
)

// block is channels.signal over the peer: DMs from Alice, the peer's group
// with mentions required.
func block(peer *signalpeer.Peer) map[string]any {
	return map[string]any{"enabled": true, "phoneNumber": signalpeer.Account,
		"daemonHost": peer.Host(), "daemonPort": peer.Port(), "attachmentsDir": peer.AttachmentsDir(),
		"dm":    map[string]any{"enabled": true, "policy": "allowlist", "allowFrom": []string{signalpeer.Alice.Number}},
		"group": map[string]any{"enabled": true, "policy": "allowlist", "allowFrom": []string{signalpeer.GroupID}, "requireMention": true}}
}

// start connects a channel with block (over the peer's) to peer.
func start(t *testing.T, peer *signalpeer.Peer, over map[string]any, opts ...channeltest.Option) *channeltest.Run[*Channel] {
	t.Helper()
	return channeltest.Start(t, channeltest.NewEnv(t, Name, channeltest.Merge(block(peer), over)), New, opts...)
}
