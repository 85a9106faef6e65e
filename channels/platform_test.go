package channels

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

// capable is a channel with every optional capability, recording the calls.
type capable struct {
	fakeChannel
	limit   int
	failAt  int // SendPart fails once at this index (-1: never)
	calls   []string
	typings int
}

func (c *capable) MaxLength() int { return c.limit }
func (c *capable) SendPart(_ context.Context, _ Reply, p Part) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.Index == c.failAt {
		c.failAt = -1
		return "", errors.New("platform down")
	}
	what := p.Text
	if p.Media != "" {
		what = "file:" + p.Media
	}
	c.calls = append(c.calls, what)
	return "m" + string(rune('0'+p.Index)), nil
}
func (c *capable) SendTyping(context.Context, protocol.Route) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.typings++
	return nil
}
func (c *capable) AckEmoji() string { return "👀" }
func (c *capable) React(_ context.Context, _ protocol.Route, id, emoji string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, "react "+id+" "+emoji)
	return nil
}
func (c *capable) Unreact(_ context.Context, _ protocol.Route, id, emoji string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, "unreact "+id+" "+emoji)
	return nil
}

func (c *capable) snapshot() ([]string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string{}, c.calls...), c.typings
}

func TestAdmittedHookRunsOnlyForAdmittedSenders(t *testing.T) {
	intake := &recordingIntake{}
	m := NewManager()
	m.Bus, m.Config = intake, config.Default()
	ch := &fakeChannel{name: "gated"}
	ran := 0
	hook := func(_ context.Context, msg *protocol.Inbound) error {
		ran++
		msg.Media = []string{"media/photo.jpg"}
		if msg.Content == "/start" {
			return ErrHandled
		}
		return nil
	}
	ctx := context.Background()
	in := func(sender, text string) protocol.Inbound {
		return protocol.Inbound{Route: protocol.Route{ChatID: "c", SenderID: sender}, Content: text, Group: true}
	}
	require.ErrorIs(t, m.Admit(ctx, ch, in("stranger", "hi"), hook), ErrRefused)
	require.Zero(t, ran, "nothing is downloaded for a stranger")
	require.NoError(t, m.Admit(ctx, ch, in("owner", "look"), hook))
	require.ErrorIs(t, m.Admit(ctx, ch, in("owner", "/start"), hook), ErrHandled)
	require.Equal(t, 2, ran)
	require.Len(t, intake.msgs, 1, "a message the channel answered itself does not reach the agent")
	require.Equal(t, []string{"media/photo.jpg"}, intake.msgs[0].Media, "the hook's changes travel with the message")
}

func TestIndicatorsRunFromAdmissionToTheAnswer(t *testing.T) {
	m := NewManager()
	m.Bus, m.Config = &recordingIntake{}, config.Default()
	ch := &capable{fakeChannel: fakeChannel{name: "gated"}, limit: 100, failAt: -1}
	m.Add(ch)
	ctx := context.Background()
	msg := protocol.Inbound{Route: protocol.Route{ChatID: "c", SenderID: "owner"}, Content: "hi",
		Metadata: map[string]string{MetaMessageID: "77"}}
	require.NoError(t, m.Admit(ctx, ch, msg, nil))
	require.Eventually(t, func() bool { _, n := ch.snapshot(); return n >= 1 }, 5*time.Second, 5*time.Millisecond)
	route := protocol.Route{Channel: "gated", ChatID: "c"}
	require.NoError(t, m.Send(ctx, Reply{Route: route, Text: "sent by the message tool", Kind: protocol.ReplyMessage}))
	calls, _ := ch.snapshot()
	require.NotContains(t, calls, "unreact 77 👀", "a message tool send is not the answer")
	require.NoError(t, m.Send(ctx, Reply{Route: route, Text: "the answer", Kind: protocol.ReplyAnswer}))
	calls, _ = ch.snapshot()
	require.Equal(t, []string{"react 77 👀", "sent by the message tool", "unreact 77 👀", "the answer"}, calls)
	m.indicators.mu.Lock()
	defer m.indicators.mu.Unlock()
	require.Empty(t, m.indicators.running, "typing stopped with the answer")
}

func TestPartsResumeFromRecordedProgress(t *testing.T) {
	ch := &capable{fakeChannel: fakeChannel{name: "gated"}, limit: 20, failAt: 2}
	r := Reply{Text: "aaaa bbbb cccc\n\ndddd eeee ffff\n\ngggg hhhh", Media: []string{"chart.png"}}
	parts := Parts(r, ch.limit)
	require.Len(t, parts, 4, "the file, then three pieces of text: %q", parts)
	require.True(t, parts[3].Last)
	var progress Progress
	attempt := func() context.Context {
		return WithProgress(context.Background(), progress, func(p Progress) error { progress = p; return nil })
	}
	require.ErrorContains(t, SendParts(attempt(), ch, r), "part 3 of 4: platform down")
	require.Equal(t, Progress{Sent: 2, IDs: []string{"m0", "m1"}}, progress)
	require.NoError(t, SendParts(attempt(), ch, r))
	require.NoError(t, SendParts(attempt(), ch, r), "a finished delivery sends nothing more")
	calls, _ := ch.snapshot()
	want := []string{"file:chart.png"}
	for _, p := range parts[1:] {
		want = append(want, p.Text)
	}
	require.Equal(t, want, calls, "each part shown once, in order")
	require.Equal(t, 4, progress.Sent)
}

// The registry is the one list: names, access, queues.
func TestRegistryDerivesAccessAndQueues(t *testing.T) {
	require.True(t, IsKnown("cli"))
	require.Equal(t, AllowFrom{"*"}, AllowFromFor(config.Default(), "cli"), "the terminal's user is its owner")
	require.Equal(t, AllowFrom{"owner"}, AllowFromFor(config.Default(), "gated"))
	require.Nil(t, AllowFromFor(config.Default(), "no-such-channel"))
	require.False(t, protocol.Route{Channel: "cli", ChatID: "x"}.Deliverable(), "an unstamped route: the per-process map decides")
	require.Panics(t, func() { Register(Spec{Name: "cli"}) })
}

// TestStampReach: a route says whether anyone can take its reply, from the
// registry, so the workflow that reads it needs no registry of its own.
func TestStampReach(t *testing.T) {
	for _, tc := range []struct {
		route protocol.Route
		want  protocol.Reach
	}{
		{protocol.Route{Channel: "cli", ChatID: "x"}, protocol.ReachNobody},
		{protocol.Route{Channel: "cli", ChatID: "x", Queue: "nanobot-cli-1"}, protocol.ReachSomeone},
		{protocol.Route{Channel: "gated", ChatID: "x"}, protocol.ReachSomeone},
		{protocol.Route{Channel: "no-such-channel", ChatID: "x"}, protocol.ReachSomeone},
		{protocol.Route{ChatID: "x"}, protocol.ReachNobody},
		{protocol.Route{Channel: "cli", ChatID: "x", Reach: protocol.ReachSomeone}, protocol.ReachNobody},
	} {
		r := tc.route
		StampReach(&r)
		require.Equal(t, tc.want, r.Reach, "%+v", tc.route)
		require.Equal(t, tc.want == protocol.ReachSomeone, r.Deliverable())
	}
}

// editing is a channel the manager streams to by editing one message.
type editing struct {
	capable
	edits []string
}

func (c *editing) EditMessage(_ context.Context, _ protocol.Route, id, text string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.edits = append(c.edits, id+"="+text)
	return nil
}
func (c *editing) StreamEvery() time.Duration { return time.Millisecond }

func (c *editing) seen() ([]string, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string{}, c.calls...), append([]string{}, c.edits...)
}

// TestManagerStreamsByEditingAndTheAnswerTakesTheMessageOver: deltas post
// one message and edit it; the answer edits that message instead of
// posting a second one.
// startEditing starts a manager over one editing channel "gated" with cfg.
func startEditing(t *testing.T, cfg *config.Config) (*Manager, *editing, *StreamHub) {
	t.Helper()
	ch := newEditing()
	m, hub := startManaging(t, cfg, ch)
	return m, ch, hub
}

func newEditing() *editing {
	return &editing{capable: capable{fakeChannel: fakeChannel{name: "gated"}, limit: 100, failAt: -1}}
}

// startManaging starts a manager over one channel.
func startManaging(t *testing.T, cfg *config.Config, ch Channel) (*Manager, *StreamHub) {
	t.Helper()
	m := NewManager()
	m.Bus, m.Config = &recordingIntake{}, cfg
	m.Add(ch)
	hub := NewStreamHub()
	require.Empty(t, m.Start(context.Background(), hub))
	t.Cleanup(func() { m.Stop(context.Background()) })
	return m, hub
}

func TestManagerStreamsByEditingAndTheAnswerTakesTheMessageOver(t *testing.T) {
	m, ch, hub := startEditing(t, config.Default())
	route := protocol.Route{Channel: "gated", ChatID: "c"}
	ev := StreamEvent{SessionKey: "gated:c", Route: route, Turn: "t1", Iteration: 1}
	for _, d := range []string{"Hel", "lo, ", "world"} {
		ev.Delta = d
		hub.Publish(ev)
	}
	shown := func() string { // what the streamed message shows now
		calls, edits := ch.seen()
		if len(edits) > 0 {
			return edits[len(edits)-1]
		}
		if len(calls) > 0 {
			return "m0=" + calls[0]
		}
		return ""
	}
	require.Eventually(t, func() bool { return shown() == "m0=Hello, world" }, 5*time.Second, 5*time.Millisecond)
	ev.Delta = "!!"
	hub.Publish(ev)
	require.Eventually(t, func() bool { return shown() == "m0=Hello, world!!" }, 5*time.Second, 5*time.Millisecond, "later text edits the message")
	calls, _ := ch.seen()
	require.Len(t, calls, 1, "one message posted for the stream: %q", calls)

	require.NoError(t, m.Send(context.Background(), Reply{Route: route, Turn: "t1", Text: "Hello, world!", Kind: protocol.ReplyAnswer}))
	calls, edits := ch.seen()
	require.Len(t, calls, 1, "the answer took the streamed message over: %q", calls)
	require.Equal(t, "m0=Hello, world!", edits[len(edits)-1])

	require.NoError(t, m.Send(context.Background(), Reply{Route: route, Turn: "t2", Text: "Not streamed", Kind: protocol.ReplyAnswer}))
	calls, _ = ch.seen()
	require.Equal(t, "Not streamed", calls[len(calls)-1], "a turn that drew nothing gets a new message")
}

// TestWithoutSendProgressTheTextIsNotDrawn: channels.sendProgress false
// draws only tool hints while a turn runs; the answer arrives whole.
func TestWithoutSendProgressTheTextIsNotDrawn(t *testing.T) {
	cfg := config.Default()
	cfg.Channels.SendProgress = false
	m, ch, hub := startEditing(t, cfg)
	route := protocol.Route{Channel: "gated", ChatID: "c"}
	hub.Publish(StreamEvent{SessionKey: "gated:c", Route: route, Turn: "t1", Iteration: 1, Delta: "Let me look."})
	hub.Publish(StreamEvent{SessionKey: "gated:c", Route: route, Turn: "t1", Iteration: 1, ToolHint: "read_file a.txt"})
	require.Eventually(t, func() bool { calls, _ := ch.seen(); return len(calls) == 1 }, 5*time.Second, 5*time.Millisecond)
	calls, _ := ch.seen()
	require.Equal(t, []string{"↳ read_file a.txt"}, calls, "the hint is drawn, the progress text is not")

	require.NoError(t, m.Send(context.Background(), Reply{Route: route, Turn: "t1", Text: "It says hi.", Kind: protocol.ReplyAnswer}))
	calls, _ = ch.seen()
	require.Equal(t, "It says hi.", calls[len(calls)-1], "the answer is sent whole")
}
