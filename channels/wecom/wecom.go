// Package wecom is the WeCom (企业微信) channel in nanobot's mode: an AI
// bot on WeCom's long connection (a WebSocket subscribed with the bot's id
// and secret, no public address needed). DMs and the group chats where the
// bot is @-mentioned come in as callbacks — text, voice transcriptions,
// images and files (downloaded and decrypted), mixed messages — and
// replies go back as stream messages on the callback's req_id, or as
// proactive Markdown when there is no callback to answer.
package wecom

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/pairing"
)

// Name is the channel's name in config, routes and session keys.
const Name = "wecom"

// Timing of the connection.
const (
	firstConnect = 15 * time.Second // Start waits this long for the first subscribe
	// takenOverWait spaces attempts after a newer connection took the bot over.
	takenOverWait = 5 * time.Minute
)

// Channel is one WeCom AI bot connection.
type Channel struct {
	channels.Base
	cfg       Config
	all       *config.Config
	pairing   *pairing.Store
	workspace string
	http      *http.Client

	callbacks *channels.InOrder[frame] // handled off the read loop
	replies   *replyTargets
	streams   streams
	// progress and hints are channels.sendProgress and sendToolHints.
	progress, hints bool
	streamEvery     time.Duration
	// heartbeat and backoff are the SDK's timings; tests shorten them.
	heartbeat time.Duration
	backoff   channels.Backoff
	takenOver time.Duration // the wait after a disconnected_event
	replaced  atomic.Bool   // the connection got disconnected_event

	mu   sync.Mutex
	conn *conn
}

// New builds the channel from config; it connects in Start.
func New(deps channels.Deps) (*Channel, error) {
	cfg, err := readConfig(deps.Config)
	if err != nil {
		return nil, err
	}
	if cfg.BotID == "" || cfg.Secret == "" {
		return nil, errors.New("channels.wecom.botId and channels.wecom.secret are not set")
	}
	if deps.Secrets != nil {
		deps.Secrets.Add(cfg.Secret)
	}
	c := &Channel{
		cfg: cfg, all: deps.Config, pairing: deps.Pairing, workspace: deps.Workspace,
		http:      &http.Client{Timeout: 2 * time.Minute},
		replies:   newReplyTargets(),
		heartbeat: heartbeatEvery, takenOver: takenOverWait, streamEvery: streamEvery,
		backoff: channels.Backoff{Min: time.Second, Max: 30 * time.Second}, // the SDK's reconnect_interval and cap
	}
	if deps.Config != nil {
		c.progress, c.hints = deps.Config.Channels.SendProgress, deps.Config.Channels.SendToolHints
	}
	c.Init(Name, deps.Logger(Name), deps.SeenSet("wecom-handled", 4096, deps.StateFile("wecom-handled.json")))
	c.callbacks = channels.NewInOrder(c.Log, "wecom callbacks", c.handle)
	return c, nil
}

// Describe tells the gateway banner which bot this is.
func (c *Channel) Describe() string {
	return fmt.Sprintf("AI bot %s on %s (long connection)", c.cfg.BotID, c.cfg.endpoint())
}

// Start subscribes once (a refused bot id or secret fails the start, with
// WeCom's errcode), then keeps the connection in the background,
// reconnecting with backoff whenever it drops.
func (c *Channel) Start(ctx context.Context, publish channels.Publish) error {
	first, err := c.connect(ctx, firstConnect)
	var refused *refusedError
	if errors.As(err, &refused) {
		c.Log.Error("wecom subscription refused", "error", err)
		return err
	}
	if err != nil {
		c.Log.Warn("wecom not reachable yet; retrying in the background", "error", err)
	}
	c.Receive(ctx, publish, "wecom connection", func(ctx context.Context) {
		defer c.callbacks.Go(ctx)() // the loop ends once the callback in hand is handled
		c.run(ctx, first)
	})
	return nil
}

// connect dials and subscribes within limit.
func (c *Channel) connect(ctx context.Context, limit time.Duration) (*conn, error) {
	cn, err := dial(ctx, c.cfg.endpoint(), limit)
	if err != nil {
		return nil, err
	}
	go func() { // reading from the start: acknowledgements reach subscribe
		err := cn.read(c.queue, c.bad)
		c.Log.Debug("wecom connection read ended", "error", err)
		cn.close()
	}()
	sctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	if err := cn.subscribe(sctx, c.cfg.BotID, c.cfg.Secret); err != nil {
		cn.close()
		return nil, err
	}
	return cn, nil
}

// run serves the connection Start made (nil: none), and dials again with
// backoff each time it ends; refused credentials stop it.
func (c *Channel) run(ctx context.Context, first *conn) {
	c.Reconnect(ctx, c.backoff, func(ctx context.Context) error {
		cn := first
		first = nil
		if cn == nil {
			var err error
			if cn, err = c.connect(ctx, firstConnect); err != nil {
				var refused *refusedError
				if errors.As(err, &refused) {
					return channels.Fatal(err)
				}
				return fmt.Errorf("wecom reconnect failed: %w", err)
			}
		}
		return c.serve(ctx, cn)
	})
}

// serve holds a subscribed connection until it drops or ctx ends, and says why it ended.
func (c *Channel) serve(ctx context.Context, cn *conn) error {
	c.mu.Lock()
	c.conn = cn
	c.mu.Unlock()
	c.Up()
	c.Log.Info("wecom subscribed", "bot", c.cfg.BotID)
	hb := make(chan error, 1)
	cn.heartbeat(c.heartbeat, func(err error) { hb <- err })
	select {
	case <-ctx.Done():
	case <-cn.closed:
	}
	c.Down()
	c.mu.Lock()
	if c.conn == cn {
		c.conn = nil
	}
	c.mu.Unlock()
	cn.close()
	select {
	case err := <-hb:
		return fmt.Errorf("wecom heartbeat lost: %w", err)
	default:
	}
	if c.replaced.Swap(false) {
		// The SDK gives up here: dialling at once would only take the bot back from the other connection.
		return channels.RetryIn(c.takenOver, errors.New("wecom connection taken over by a newer one of this bot (another gateway?); trying again later"))
	}
	return errors.New("wecom connection dropped")
}

// current is the subscribed connection, nil while there is none.
func (c *Channel) current() *conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn
}

// Stop implements channels.Channel: the connection closes, the loops end.
func (c *Channel) Stop(ctx context.Context) error {
	if cn := c.current(); cn != nil {
		cn.close()
	}
	return c.Base.Stop(ctx)
}

// queue hands a callback to the handler, in order; the read loop never
// waits on the agent (its acks reach the requests the handler makes).
func (c *Channel) queue(f frame) {
	if f.Cmd == cmdEventCallback {
		var b callback
		if json.Unmarshal(f.Body, &b) == nil && b.Event != nil && b.Event.EventType == eventDisconnected {
			c.replaced.Store(true) // seen before the close that follows it
		}
	}
	c.callbacks.Push(f)
}

// bad logs a frame that is not WeCom's protocol and drops it.
func (c *Channel) bad(raw []byte, err error) {
	if len(raw) > 200 {
		raw = raw[:200]
	}
	c.Log.Warn("wecom frame dropped", "error", err, "frame", string(raw))
}
