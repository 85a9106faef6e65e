package weixin

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/weixin/weixinpeer"
)

// TestContextTokensSharedBetweenGateways: two gateways on one account and
// one database (the state store every gateway is given there): the one
// with a fresh home answers with the token the other received, and a
// refresh one makes is what the other sends with next.
func TestContextTokensSharedBetweenGateways(t *testing.T) {
	peer := weixinpeer.New(t)
	db := channels.OpenFileState("") // the database's stand-in: one store both gateways reach
	onDB := func(string) channels.StateStore { return db }
	dirA := t.TempDir()
	loggedIn(t, peer, dirA)
	envA := channeltest.NewEnv(t, Name, blockFor(peer, dirA, nil))
	envA.State = onDB
	a := channeltest.Start(t, envA, New)
	require.Eventually(t, peer.Connected, 10*time.Second, 10*time.Millisecond, "the bot never polled")

	dirB := t.TempDir()
	loggedIn(t, peer, dirB) // the same login, no context token of its own
	envB := channeltest.NewEnv(t, Name, blockFor(peer, dirB, nil))
	envB.State = onDB
	b, err := New(envB.Deps) // it sends only; A polls
	require.NoError(t, err)

	peer.Say(weixinpeer.Message{From: alice, Text: "hi", ContextToken: "ctx-" + alice + "-2"})
	a.WaitPublished(1)
	require.NoError(t, channels.Deliver(context.Background(), b, reply(alice, "t1", "from B")))
	require.Equal(t, "ctx-"+alice+"-2", peer.Sent(alice)[0].ContextToken, "B answers with the token A received")
	require.Zero(t, peer.Calls("getconfig"), "a fresh token is not refreshed")

	// The token ages past the refresh: B refreshes it, A sends with B's refresh.
	key := b.contextKey(alice)
	raw, err := db.Get(key)
	require.NoError(t, err)
	var old sharedToken
	require.NoError(t, json.Unmarshal([]byte(raw), &old))
	a.Ch.mu.Lock()
	a.Ch.tokenAt[alice] = time.Now().Add(-2 * time.Minute)
	a.Ch.mu.Unlock()
	b.mu.Lock()
	b.tokenAt[alice] = time.Now().Add(-2 * time.Minute)
	b.mu.Unlock()
	old.At = time.Now().Add(-2 * time.Minute)
	aged, err := json.Marshal(old)
	require.NoError(t, err)
	require.NoError(t, db.Put(key, string(aged)))
	require.NoError(t, channels.Deliver(context.Background(), b, reply(alice, "t2", "B again")))
	require.Equal(t, "ctx-"+alice+"-refreshed", peer.Sent(alice)[1].ContextToken)
	require.NoError(t, channels.Deliver(context.Background(), a.Ch, reply(alice, "t3", "from A")))
	require.Equal(t, "ctx-"+alice+"-refreshed", peer.Sent(alice)[2].ContextToken, "A sends with B's refresh")
	require.Equal(t, 1, peer.Calls("getconfig"), "refreshed once, by B")
}
