package channeltest

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/secrets"
)

// Env is what a channel is built with in a test: its deps over a config
// holding its block, a home and a workspace of their own, and a debug log
// kept in Logs (printed when the test fails) that masks Secrets.
type Env struct {
	channels.Deps
	Logs *testenv.SyncBuffer
}

// NewEnv is the env of channel with its config block (nanobot's key names,
// marshalled to JSON as a config file holds them).
func NewEnv(t testing.TB, channel string, block map[string]any) Env {
	t.Helper()
	raw, err := json.Marshal(block)
	require.NoError(t, err)
	logs := &testenv.SyncBuffer{}
	cfg := ConfigWith(t, channel, string(raw))
	mask := secrets.FromConfig(nil, nil)
	log := slog.New(secrets.Handler(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}), mask))
	return Env{Logs: logs, Deps: channels.Deps{Config: cfg, Workspace: t.TempDir(), Home: t.TempDir(), Secrets: mask, Log: log}}
}

// Merge is block with over's keys put over it (a test's settings over the
// peer's defaults).
func Merge(block, over map[string]any) map[string]any {
	out := maps.Clone(block)
	if out == nil {
		out = map[string]any{}
	}
	maps.Copy(out, over)
	return out
}

// ErrTemporalDown is what publishing returns while a Run is Down.
var ErrTemporalDown = errors.New("temporal unreachable (test)")

// Run is a channel started in a test, publishing into a Publisher where the
// manager would be.
type Run[C channels.Channel] struct {
	T  testing.TB
	Ch C
	Env
	*Publisher
	// Down makes publishing fail, as when Temporal cannot be reached.
	Down atomic.Bool
	// Manager is the real manager the channel publishes through (Behind), else nil.
	Manager *channels.Manager

	once sync.Once
	stop func()
}

// Option changes how Start runs a channel.
type Option func(*options)

type options struct {
	publish channels.Publish
	bus     channels.Intake
	noWait  bool
}

// PublishTo sends what the channel publishes to p (BehindManager's gate)
// instead of the Run's Publisher.
func PublishTo(p channels.Publish) Option { return func(o *options) { o.publish = p } }

// Behind puts the channel behind a real manager (its allow lists,
// pairing, the Admitted hook, replies through Manager.Send) whose bus is
// bus, where the agent would be.
func Behind(bus channels.Intake) Option { return func(o *options) { o.bus = bus } }

// NoWait starts the channel without waiting for it to connect (one that is
// expected not to).
func NoWait() Option { return func(o *options) { o.noWait = true } }

// Start builds a channel from env, starts it, and waits until it holds its
// platform (a channels.Connector says so). The test's end stops it, and
// prints its log if the test failed.
func Start[C channels.Channel](t testing.TB, env Env, build func(channels.Deps) (C, error), opts ...Option) *Run[C] {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	ch, err := build(env.Deps)
	require.NoError(t, err)
	r := &Run[C]{T: t, Ch: ch, Env: env, Publisher: NewPublisher(t)}
	publish := o.publish
	if o.bus != nil {
		r.Manager = managerFor(t, env.Config, o.bus)
		r.Manager.Log = env.Log
		r.Manager.Add(ch)
		publish = gate(r.Manager, ch)
	}
	if publish == nil {
		publish = r.Publish
	}
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, ch.Start(ctx, func(ctx context.Context, msg protocol.Inbound, admitted channels.Admitted) error {
		if r.Down.Load() {
			return ErrTemporalDown
		}
		return publish(ctx, msg, admitted)
	}))
	r.stop = func() {
		stopCtx, done := context.WithTimeout(context.Background(), 10*time.Second)
		defer done()
		require.NoError(t, ch.Stop(stopCtx))
		cancel()
	}
	t.Cleanup(func() {
		r.Stop()
		if t.Failed() {
			t.Logf("%s channel log:\n%s", ch.Name(), env.Logs.String())
		}
	})
	if cn, ok := any(ch).(channels.Connector); ok && !o.noWait {
		require.Eventually(t, cn.Connected, 10*time.Second, 5*time.Millisecond, "the %s channel never connected", ch.Name())
	}
	return r
}

// Stop stops the channel now (a restart starts another Run on the same
// Env); the test's end does not stop it again.
func (r *Run[C]) Stop() { r.once.Do(r.stop) }
