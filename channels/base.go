package channels

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nanobot-durable/nanobot/protocol"
)

// Base is what every chat channel embeds: its name, its logger, its
// receive loop (Receive, Serve, Stop), whether it holds its platform's
// connection, when the platform last sent something, and the one way a
// platform event is taken in (TakeIn). The channel's own code is then only
// its wire, its auth and its rendering.
type Base struct {
	name string
	// Log is the channel's logger (never nil once Init ran).
	Log  *slog.Logger
	seen SeenKeys

	mu      sync.Mutex
	publish Publish
	botID   string
	botName string

	loop     receiveLoop // the receive loop Receive starts and Stop ends
	loopName string      // what Stop's error calls it

	connected atomic.Bool
	upSince   atomic.Int64 // unix nanoseconds of the last Up; 0 once Reconnect read it
	lastEvent atomic.Int64 // unix nanoseconds
}

// Init names the channel, gives it its logger (nil: slog's default) and the
// dedupe set its events are taken in through (nil: none, every event is new).
func (b *Base) Init(name string, log *slog.Logger, seen SeenKeys) {
	if log == nil {
		log = slog.Default()
	}
	b.name, b.Log, b.seen = name, log, seen
}

// Name implements Channel.
func (b *Base) Name() string { return b.name }

// Seen is the channel's dedupe set (nil when it has none).
func (b *Base) Seen() SeenKeys { return b.seen }

// Attach keeps the manager's publish for TakeIn; a channel's Start calls it
// before its receive loop begins.
func (b *Base) Attach(publish Publish) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.publish = publish
}

// SetBot records who the bot is on the platform (its users/@me, READY).
func (b *Base) SetBot(id, name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.botID, b.botName = id, name
}

// Bot is the bot's platform id and name ("" until the platform said).
func (b *Base) Bot() (id, name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.botID, b.botName
}

// BotID is the bot's platform id ("" until the platform said).
func (b *Base) BotID() string {
	id, _ := b.Bot()
	return id
}

// Up records that the channel holds its platform's connection now.
func (b *Base) Up() {
	b.upSince.Store(time.Now().UnixNano())
	b.connected.Store(true)
	b.Touch()
}

// Down records that the connection was lost (or closed).
func (b *Base) Down() { b.connected.Store(false) }

// Connected implements Connector.
func (b *Base) Connected() bool { return b.connected.Load() }

// upFor is how long the last connection was up, if one was since the
// last call (0: none); Reconnect asks it once per connection.
func (b *Base) upFor() time.Duration {
	since := b.upSince.Swap(0)
	if since == 0 {
		return 0
	}
	return time.Since(time.Unix(0, since))
}

// Touch records that the platform sent something (an event, a heartbeat's answer).
func (b *Base) Touch() { b.lastEvent.Store(time.Now().UnixNano()) }

// LastEvent is when the platform last sent something (zero: never).
func (b *Base) LastEvent() time.Time {
	n := b.lastEvent.Load()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// ErrDuplicate is TakeIn's answer for an event taken in before (a
// platform's redelivery, a replay after a resume, another gateway's claim).
var ErrDuplicate = errors.New("event already taken in")

// TakeIn hands one platform event to the agent, under the one loss rule of
// every channel: key (the platform's event id; "" for none) is claimed
// first, so of two deliveries (a redelivery, two gateways) one goes on; if
// the manager took the message — published, refused, or answered by the
// channel's hook — the key is recorded and the event is never answered
// twice; if it did not (Temporal unreachable, ctx ended) the key is
// released, so the platform's redelivery, a poll again or a replay after a
// restart takes it in again.
//
// It returns nil when the agent took the event, ErrRefused or ErrHandled
// when the manager or the channel's hook answered it, ErrDuplicate for an
// event taken in before (all four: Handed), else the publish's error,
// already logged, for a channel that must not acknowledge the event.
func (b *Base) TakeIn(ctx context.Context, key string, msg protocol.Inbound, admitted Admitted) error {
	b.Touch()
	if key != "" && b.seen != nil && !b.seen.Claim(key) {
		b.Log.Info(b.name+" message redelivered; already taken in", "key", key, "chat", msg.Route.ChatID)
		return ErrDuplicate
	}
	err := b.Publish(ctx, msg, admitted)
	if err == nil || errors.Is(err, ErrRefused) || errors.Is(err, ErrHandled) {
		if key != "" && b.seen != nil {
			b.seen.Done(key)
		}
		return err // a refused sender was logged by the manager
	}
	if key != "" && b.seen != nil {
		b.seen.Forget(key)
	}
	b.Log.Error(b.name+" message could not be handed to the agent; it is taken in again when it comes back",
		"key", key, "chat", msg.Route.ChatID, "sender", msg.Route.SenderID, "error", err)
	return fmt.Errorf("%s message %s: %w", b.name, key, err)
}

// PublishPatience is how long a channel whose platform never sends an event
// again keeps offering it to the agent (TakeInPatiently) before it gives
// up and logs it: longer than a restart of Temporal or its database.
const PublishPatience = 10 * time.Minute

// TakeInPatiently is TakeIn retried, with waits doubling from a second to
// half a minute, for up to patience while Temporal does not take the
// message: for a platform that will not send an acknowledged event again.
func (b *Base) TakeInPatiently(ctx context.Context, key string, msg protocol.Inbound, admitted Admitted, patience time.Duration) error {
	deadline := time.Now().Add(patience)
	wait := time.Second
	for {
		err := b.TakeIn(ctx, key, msg, admitted)
		if Handed(err) || time.Now().Add(wait).After(deadline) || !Sleep(ctx, wait) {
			return err
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// Publish hands msg to the manager as it is, outside the loss rule: for
// an event the channel answers on the platform itself (a button press
// told it was refused), which tells ErrRefused from success.
func (b *Base) Publish(ctx context.Context, msg protocol.Inbound, admitted Admitted) error {
	b.mu.Lock()
	publish := b.publish
	b.mu.Unlock()
	if publish == nil {
		return errors.New("the channel is not started")
	}
	return publish(ctx, msg, admitted)
}

// Handed reports whether TakeIn is done with the event (taken, refused,
// handled or a duplicate): a platform that acknowledges events may ack it.
func Handed(err error) bool {
	return err == nil || errors.Is(err, ErrDuplicate) || errors.Is(err, ErrRefused) || errors.Is(err, ErrHandled)
}
