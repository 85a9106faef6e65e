// Package mattermost is the Mattermost channel: the /api/v4/websocket
// event stream in — DMs, and channel posts and threads as nanobot's
// groupPolicy allows, reactions answering approval requests — and the REST
// API v4 out with a bot token: posts in the message's thread, files,
// typing, reactions, streaming by patching one post.
package mattermost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Name is the channel's name in config, routes and session keys.
const Name = "mattermost"

// callTimeout bounds one REST call made on the channel's own behalf.
const callTimeout = 30 * time.Second

// user is a Mattermost user as the channel knows it.
type user struct {
	ID       string `json:"id"`
	Username string `json:"username"`
}

// Channel is one Mattermost bot connection.
type Channel struct {
	cfg       Config
	workspace string
	log       *slog.Logger
	api       *client
	seen      channels.SeenKeys // post ids and reactions taken in
	up        atomic.Bool       // the event stream is open

	mu      sync.Mutex
	me      user
	publish channels.Publish
	cancel  context.CancelFunc
	threads map[string]bool // threads whose context the model was given
	wg      sync.WaitGroup
}

// New builds the channel from config; it connects in Start.
func New(deps channels.Deps) (*Channel, error) {
	cfg, err := channels.ValidBlock(deps.Config, Name, defaults)
	if err != nil {
		return nil, err
	}
	if keys := cfg.Lacking(); len(keys) > 0 {
		return nil, fmt.Errorf("%s is not set", strings.Join(keys, " and "))
	}
	log := deps.Log
	if log == nil {
		log = slog.Default()
	}
	return &Channel{
		cfg: cfg, workspace: deps.Workspace, log: log.With("channel", Name),
		api:     &client{base: strings.TrimRight(cfg.ServerURL, "/"), token: cfg.Token, hc: &http.Client{Timeout: 2 * callTimeout}},
		seen:    deps.SeenSet("mattermost-events", 4096, ""),
		threads: map[string]bool{},
	}, nil
}

// Name implements channels.Channel.
func (c *Channel) Name() string { return Name }

// Connected implements channels.Connector.
func (c *Channel) Connected() bool { return c.up.Load() }

// Describe tells the gateway banner which bot this is.
func (c *Channel) Describe() string {
	me := c.bot()
	if me.ID == "" {
		return "bot identity unknown (users/me failed; connecting)"
	}
	return fmt.Sprintf("@%s (%s), groupPolicy %s", me.Username, me.ID, c.cfg.GroupPolicy)
}

// Start checks the token (users/me), then listens to the event stream in
// the background. A refused token fails the start; a network error only
// delays the stream, which asks again.
func (c *Channel) Start(ctx context.Context, publish channels.Publish) error {
	runCtx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	c.publish, c.cancel = publish, cancel
	c.mu.Unlock()
	if err := c.identify(ctx); isPermanent(sendError(err)) {
		cancel()
		return fmt.Errorf("mattermost refused channels.mattermost.token (users/me): %w", err)
	} else if err != nil {
		c.log.Warn("mattermost users/me failed; asking again when the stream connects", "error", err)
	}
	c.wg.Add(1)
	go func() { defer c.wg.Done(); c.listen(runCtx) }()
	return nil
}

// identify asks who the bot is (GET /users/me).
func (c *Channel) identify(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var me user
	if err := c.api.call(cctx, http.MethodGet, "/users/me", nil, &me); err != nil {
		return err
	}
	c.mu.Lock()
	c.me = me
	c.mu.Unlock()
	c.log.Info("mattermost bot identified", "bot", "@"+me.Username, "id", me.ID)
	return nil
}

// Stop implements channels.Channel: the stream closes, the handlers end.
func (c *Channel) Stop(ctx context.Context) error {
	c.mu.Lock()
	cancel := c.cancel
	c.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("mattermost channel did not stop in time: %w", ctx.Err())
	}
}

func (c *Channel) bot() user {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.me
}

// takeIn hands a message to the manager once: its key is claimed first,
// recorded when the message was taken (or refused), and released when it
// was not, so a redelivery is taken in again.
func (c *Channel) takeIn(ctx context.Context, key string, msg protocol.Inbound, admitted channels.Admitted) bool {
	if !c.seen.Claim(key) {
		c.log.Info("mattermost event redelivered; already taken in", "key", key)
		return false
	}
	c.mu.Lock()
	publish := c.publish
	c.mu.Unlock()
	err := publish(ctx, msg, admitted)
	if err == nil || errors.Is(err, channels.ErrRefused) || errors.Is(err, channels.ErrHandled) {
		c.seen.Done(key)
		return err == nil
	}
	c.seen.Forget(key)
	c.log.Error("mattermost message could not be handed to the agent", "id", msg.ID, "chat", msg.Route.ChatID, "error", err)
	return false
}

// preview is the start of a payload, for the log.
func preview(raw []byte) string {
	if len(raw) > 200 {
		return string(raw[:200]) + "…"
	}
	return string(raw)
}
