package wecom

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/wecom/wecompeer"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

func TestReconnectsAfterADrop(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Drop()
	require.Eventually(t, func() bool { _, subs, _ := h.peer.Stats(); return subs >= 2 && h.peer.Subscribed() },
		10*time.Second, 10*time.Millisecond, "the bot never subscribed again")
	h.waitUp()
	got := h.sync()
	require.Equal(t, "sync", got.Content, "messages come in on the new connection")
	require.Contains(t, h.Logs.String(), "wecom connection dropped; reconnecting")
}

func TestHeartbeatLossReconnects(t *testing.T) {
	peer := wecompeer.New(t)
	deps, logs := depsFor(t, peer, nil)
	ch, err := New(deps)
	require.NoError(t, err)
	ch.heartbeat, ch.backoff = 20*time.Millisecond, channels.Backoff{Min: 20 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, ch.Start(ctx, channeltest.NewPublisher(t).Publish))
	defer func() { require.NoError(t, ch.Stop(context.Background())) }()
	require.Eventually(t, func() bool { _, _, pings := peer.Stats(); return pings >= 3 }, 10*time.Second, 5*time.Millisecond)
	conns, _, _ := peer.Stats()
	require.Equal(t, 1, conns, "answered pings keep the connection")
	peer.Silence(true)
	require.Eventually(t, func() bool { c, _, _ := peer.Stats(); return c >= 2 }, 10*time.Second, 5*time.Millisecond,
		"two unanswered pings and the bot dials again")
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "wecom heartbeat lost") }, 5*time.Second, 5*time.Millisecond)
}

func TestWrongSecretFailsTheStartClearly(t *testing.T) {
	peer := wecompeer.New(t)
	deps, _ := depsFor(t, peer, map[string]any{"secret": "wrong"})
	ch, err := New(deps)
	require.NoError(t, err)
	err = ch.Start(context.Background(), channeltest.NewPublisher(t).Publish)
	require.ErrorContains(t, err, "WeCom refused the subscription (errcode 40001: invalid secret)")
	require.ErrorContains(t, err, "channels.wecom.secret")
	require.False(t, ch.Connected())
	require.NoError(t, ch.Stop(context.Background()))
	_, subs, _ := peer.Stats()
	require.Equal(t, 1, subs, "no retry loop against a refused secret")
}

func TestStartsWhileWeComIsUnreachable(t *testing.T) {
	peer := wecompeer.New(t)
	deps, _ := depsFor(t, peer, map[string]any{"wsUrl": "ws://127.0.0.1:1"})
	ch, err := New(deps)
	require.NoError(t, err)
	ch.backoff = channels.Backoff{Min: 20 * time.Millisecond}
	require.NoError(t, ch.Start(context.Background(), channeltest.NewPublisher(t).Publish), "a network error only delays")
	require.False(t, ch.Connected())
	stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, ch.Stop(stop))
}

func TestWelcomeMessageOnEnterChat(t *testing.T) {
	h := startHarness(t, map[string]any{"welcomeMessage": "你好！有什么可以帮你？", "allowFrom": []string{alice}})
	req := h.peer.EnterChat(alice)
	require.Eventually(t, func() bool { return len(h.peer.Welcomes(req)) == 1 }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, "你好！有什么可以帮你？", h.peer.Welcomes(req)[0])
	stranger := h.peer.EnterChat("mallory")
	h.sync()
	require.Empty(t, h.peer.Welcomes(stranger), "nobody outside allowFrom is welcomed")
	require.Len(t, h.Published(), 1, "an event is not a message")
}

func TestConfig(t *testing.T) {
	block := func(b map[string]any) *config.Config {
		raw, err := json.Marshal(b)
		require.NoError(t, err)
		cfg := config.Default()
		cfg.Channels.Other = map[string]json.RawMessage{"wecom": raw}
		return cfg
	}
	spec, ok := channels.Lookup(Name)
	require.True(t, ok)
	cfg := block(map[string]any{"enabled": true, "bot_id": "b"})
	require.True(t, spec.Enabled(cfg))
	require.Equal(t, []string{"channels.wecom.secret"}, spec.Missing(cfg), "snake_case keys read too")
	require.Equal(t, channels.AllowFrom{"u1"}, spec.AllowFrom(block(map[string]any{"allowFrom": []string{"u1"}})))
	_, err := spec.Check(block(map[string]any{"wsUrl": "http://x"}))
	require.ErrorContains(t, err, "channels.wecom.wsUrl")
	_, err = New(channels.Deps{Config: block(map[string]any{"enabled": true})})
	require.ErrorContains(t, err, "botId")
	c, err := readConfig(block(map[string]any{"botId": "b", "secret": "s"}))
	require.NoError(t, err)
	require.Equal(t, "wss://openws.work.weixin.qq.com", c.endpoint(), "WeCom's endpoint unless wsUrl says otherwise")
}

func TestTakenOverConnectionWaitsBeforeDiallingAgain(t *testing.T) {
	h := startHarness(t, nil)
	h.Ch.takenOver = 300 * time.Millisecond
	h.peer.Replace()
	require.Eventually(t, func() bool { return !h.Ch.Connected() }, 5*time.Second, 5*time.Millisecond)
	require.Never(t, func() bool { _, subs, _ := h.peer.Stats(); return subs > 1 }, 150*time.Millisecond, 5*time.Millisecond,
		"no tug of war with the newer connection")
	err := channels.Deliver(context.Background(), h.Ch, answer(alice, "", "t1", "while away"))
	var se *channels.SendError
	require.ErrorContains(t, err, "not connected")
	require.False(t, errors.As(err, &se) && se.Permanent, "delivery waits for the connection")
	require.Eventually(t, func() bool { _, subs, _ := h.peer.Stats(); return subs == 2 }, 5*time.Second, 5*time.Millisecond,
		"the bot comes back later")
	h.waitUp()
	require.Contains(t, h.Logs.String(), "taken over by a newer one")
}

// The loss rule on WeCom: a message Temporal did not take is not marked
// taken (an older build marked it on arrival), so WeCom's redelivery of it
// after a restart reaches the agent, once.
func TestRefusedPublishIsTakenInAgainAfterARestart(t *testing.T) {
	h := startHarness(t, nil)
	h.Down.Store(true)
	lost := wecompeer.Message{MsgID: "msg-lost", From: alice, Text: "keep me"}
	h.peer.Say(lost)
	require.Eventually(t, func() bool { return strings.Contains(h.Logs.String(), "could not be handed to the agent") },
		10*time.Second, 10*time.Millisecond)
	h.Stop()

	again := &harness{Run: channeltest.Start(t, h.Env, quick), peer: h.peer}
	again.waitUp()
	h.peer.Say(lost)
	require.Equal(t, "wecom:msg-lost", again.WaitPublished(1)[0].ID)
	h.peer.Say(lost)
	again.sync()
	require.Len(t, again.Published(), 2, "the next redelivery is a duplicate")
}

// A flood of callbacks while the agent is slow loses none and keeps their
// order, and the socket keeps answering its heartbeat meanwhile: the
// queue's full rule (channels.InOrder) is that Push never waits and never
// drops. An older build dropped a callback once 256 were waiting.
func TestFloodWhileTheHandlerIsHeldLosesNothing(t *testing.T) {
	const flood = 300 // past InOrder's warning at 256 and WeCom's old limit
	peer := wecompeer.New(t)
	pub := channeltest.NewPublisher(t)
	held := make(chan struct{})
	holding := make(chan struct{}, 1)
	publish := func(ctx context.Context, msg protocol.Inbound, admitted channels.Admitted) error {
		select {
		case holding <- struct{}{}:
		default:
		}
		select {
		case <-held:
		case <-ctx.Done():
			return ctx.Err()
		}
		return pub.Publish(ctx, msg, admitted)
	}
	beating := func(d channels.Deps) (*Channel, error) {
		ch, err := quick(d)
		if err == nil {
			ch.heartbeat = 10 * time.Millisecond
		}
		return ch, err
	}
	run := channeltest.Start(t, envFor(t, peer, nil), beating, channeltest.PublishTo(publish))
	require.Eventually(t, peer.Subscribed, 10*time.Second, 10*time.Millisecond)

	var sent []string
	_, id := peer.Say(wecompeer.Message{From: alice, Text: "0"})
	sent = append(sent, "wecom:"+id)
	<-holding // the handler holds the first callback from here on
	for i := 1; i < flood; i++ {
		_, id := peer.Say(wecompeer.Message{From: alice, Text: fmt.Sprint(i)})
		sent = append(sent, "wecom:"+id)
	}
	require.Eventually(t, func() bool {
		return strings.Contains(run.Logs.String(), "wecom callbacks: the handler is behind")
	}, 10*time.Second, 10*time.Millisecond, "every callback reached the queue while the handler was held")
	_, _, pings := peer.Stats()
	require.Eventually(t, func() bool { _, _, now := peer.Stats(); return now >= pings+3*maxMissedPongs },
		10*time.Second, 5*time.Millisecond, "the heartbeat goes on while the handler is held")
	connections, _, _ := peer.Stats()
	require.Equal(t, 1, connections, "pongs were read: the connection was never given up")
	require.Empty(t, pub.Published())

	close(held)
	got := pub.WaitPublished(flood)
	require.Len(t, got, flood)
	for i, in := range got {
		require.Equal(t, sent[i], in.ID, "callback %d out of order", i)
		require.Equal(t, fmt.Sprint(i), in.Content)
	}
}
