package matrix

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/channels/matrix/dendritepeer"
	"github.com/nanobot-durable/nanobot/protocol"
)

// botName is the bot's display name on the test homeserver.
const botName = "Nanobot"

// defaultWait bounds a wait for the homeserver or the channel; pollEvery is its poll.
const (
	defaultWait = 30 * time.Second
	pollEvery   = 20 * time.Millisecond
)

// harness is the channel on a real dendrite, run by channeltest's kit
// behind a real manager whose agent is a list (alice is allowed, bob is
// not), and under a stream manager that draws streams and delivers answers.
type harness struct {
	t          *testing.T
	hs         *dendritepeer.Homeserver
	bot        *dendritepeer.User
	alice, bob *dendritepeer.User
	// env is the channel's config, workspace, log (and, set before start,
	// the shared channel state the gateway is given: State nil is the files).
	env     channeltest.Env
	bus     *channeltest.Bus // what the manager admitted, across restarts
	run     *channeltest.Run[*Channel]
	ch      *Channel
	streams channeltest.Managed
}

// newHarness registers the users and writes the config; start connects.
func newHarness(t *testing.T, block map[string]any, opts ...dendritepeer.Options) *harness {
	t.Helper()
	hs := dendritepeer.StartDendrite(t, opts...)
	h := &harness{t: t, hs: hs, bot: hs.RegisterUser(t, "nanobot"), alice: hs.RegisterUser(t, "alice"), bob: hs.RegisterUser(t, "bob"),
		bus: &channeltest.Bus{}}
	h.bot.SetDisplayName(t, botName)
	b := map[string]any{"enabled": true, "homeserver": hs.URL, "userId": h.bot.ID, "accessToken": h.bot.Token,
		"deviceId": h.bot.DeviceID, "allowFrom": []string{h.alice.ID}}
	for k, v := range block {
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
	}
	h.env = channeltest.NewEnv(t, Name, b)
	return h
}

// startHarness is newHarness, started.
func startHarness(t *testing.T, block map[string]any, opts ...dendritepeer.Options) *harness {
	h := newHarness(t, block, opts...)
	h.start()
	return h
}

// start builds the channel from the env and runs it until the test ends
// (or stop), waiting for its first sync.
func (h *harness) start() {
	h.t.Helper()
	h.run = channeltest.Start(h.t, h.env, New, channeltest.Behind(h.bus))
	h.ch = h.run.Ch
	h.streams = channeltest.Manage(h.t, h.env.Config, h.ch)
	h.waitSynced()
}

// stop stops the channel now; start runs another on the same env.
func (h *harness) stop() { h.run.Stop() }

// waitSynced waits until the channel saved a sync token: messages sent
// from now on are new to it.
func (h *harness) waitSynced() {
	h.t.Helper()
	require.Eventually(h.t, func() bool { return h.syncToken() != "" }, 30*time.Second, 10*time.Millisecond,
		"the channel never finished its first sync")
}

// syncToken is the next_batch the channel saved ("" before its first sync).
func (h *harness) syncToken() string {
	h.t.Helper()
	token, err := h.ch.cursor.Load()
	require.NoError(h.t, err)
	return token
}

// waitLog waits until the channel logged a line containing every part.
func (h *harness) waitLog(parts ...string) {
	h.t.Helper()
	require.Eventually(h.t, func() bool {
		for _, line := range strings.Split(h.env.Logs.String(), "\n") {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(line, p)
			}
			if ok {
				return true
			}
		}
		return false
	}, 30*time.Second, 10*time.Millisecond, "no log line with %q", parts)
}

// waitInbound waits for n admitted messages and returns them.
func (h *harness) waitInbound(n int) []protocol.Inbound {
	h.t.Helper()
	require.Eventually(h.t, func() bool { return len(h.bus.Admitted()) >= n }, 30*time.Second, 10*time.Millisecond,
		"expected %d admitted messages", n)
	return h.bus.Admitted()
}

// dm is a direct room alice opened with the bot, joined by the bot.
func (h *harness) dm(user *dendritepeer.User) string {
	h.t.Helper()
	room := user.CreateRoom(h.t, true, h.bot)
	require.Eventually(h.t, func() bool { return user.Joined(h.t, room, h.bot) }, 30*time.Second, 20*time.Millisecond,
		"the bot did not join %s's DM", user.ID)
	return room
}

// botMessages are the bot's messages in the room (edits left out), and every event.
func (h *harness) botMessages(room string) ([]dendritepeer.Event, []dendritepeer.Event) {
	all := h.alice.Messages(h.t, room)
	return dendritepeer.From(all, h.bot), all
}

// lastShows waits until the bot's newest message in the room shows text:
// dendrite's read side catches up with an accepted edit a moment later.
func (h *harness) lastShows(room, text string) ([]dendritepeer.Event, []dendritepeer.Event) {
	h.t.Helper()
	var mine, all []dendritepeer.Event
	require.Eventually(h.t, func() bool {
		mine, all = h.botMessages(room)
		return len(mine) > 0 && dendritepeer.ShownBody(all, mine[len(mine)-1]) == text
	}, 30*time.Second, 20*time.Millisecond, "the room's last bot message never showed %q", text)
	return mine, all
}

// answer delivers a turn's answer through the manager.
func (h *harness) answer(in protocol.Inbound, turn, text string, media ...string) {
	h.t.Helper()
	require.NoError(h.t, h.streams.Send(context.Background(), channels.Reply{
		ID: turn, Route: in.Route, Turn: turn, Text: text, Media: media, Kind: protocol.ReplyAnswer,
	}))
}

// withKey is a config block with one key set.
func withKey(t *testing.T, raw json.RawMessage, key string, value any) json.RawMessage {
	t.Helper()
	var b map[string]any
	require.NoError(t, json.Unmarshal(raw, &b))
	b[key] = value
	out, err := json.Marshal(b)
	require.NoError(t, err)
	return out
}

func contents(msgs []protocol.Inbound) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Content
	}
	return out
}

func countLines(logs, part string) int {
	n := 0
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, part) {
			n++
		}
	}
	return n
}
