// Package mattermost is the Mattermost channel: the /api/v4/websocket
// event stream in — DMs, and channel posts and threads as nanobot's
// groupPolicy allows, reactions answering approval requests — and the REST
// API v4 out with a bot token: posts in the message's thread, files,
// typing, reactions, streaming by patching one post.
package mattermost

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
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
	channels.Base
	cfg       Config
	workspace string
	api       *channels.API
	resume    resumePoint // touched by the stream's goroutine only
	threads   *channels.ThreadContext
}

// New builds the channel from config; it connects in Start.
func New(deps channels.Deps) (*Channel, error) {
	cfg, err := channels.StartBlock(deps.Config, Name, defaults)
	if err != nil {
		return nil, err
	}
	c := &Channel{cfg: cfg, workspace: deps.Workspace,
		api: &channels.API{Name: Name, Base: strings.TrimRight(cfg.ServerURL, "/") + "/api/v4", Token: cfg.Token,
			HTTP: &http.Client{Timeout: 2 * callTimeout}, RetryAfterHeader: "X-Ratelimit-Reset"}}
	c.Init(Name, deps.Logger(Name), deps.SeenSet("mattermost-events", 4096, deps.StateFile("mattermost-seen.json")))
	c.threads = channels.NewThreadContext("Mattermost", cfg.ThreadContextLimit, c.Log)
	return c, nil
}

// Describe tells the gateway banner which bot this is.
func (c *Channel) Describe() string {
	id, username := c.Bot()
	if id == "" {
		return "connecting"
	}
	return fmt.Sprintf("@%s (%s), groupPolicy %s", username, id, c.cfg.GroupPolicy)
}

// Start asks who the bot is, for the banner (a refused token fails the
// start; the network only delays it), then listens to the event stream.
func (c *Channel) Start(ctx context.Context, publish channels.Publish) error {
	if err := c.identify(ctx); channels.IsPermanent(err) {
		return err
	} else if err != nil {
		c.Log.Warn("mattermost users/me failed; asking again when the stream connects", "error", err)
	}
	c.Serve(ctx, publish, "mattermost event stream", channels.Backoff{}, c.connect)
	return nil
}

// identify asks who the bot is (GET /users/me); a refused token stops the channel.
func (c *Channel) identify(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var me user
	if err := c.api.Call(cctx, http.MethodGet, "/users/me", nil, &me); channels.IsPermanent(err) {
		return channels.Fatal(fmt.Errorf("mattermost refused channels.mattermost.token: %w", err))
	} else if err != nil {
		return err
	}
	c.SetBot(me.ID, me.Username)
	c.Log.Info("mattermost bot identified", "bot", "@"+me.Username, "id", me.ID)
	return nil
}
