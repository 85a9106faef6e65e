// Package feishu is the Feishu / Lark channel: the long connection
// (WebSocket event mode, pbbp2 frames) in — p2p chats, and groups as
// nanobot's groupPolicy allows — and the open platform's REST API out:
// Markdown rendered as interactive cards, streamed by updating the card,
// replies to the user's message in topics, reactions, images and files.
package feishu

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/secrets"
)

// Name is the channel's name in config, routes and session keys.
const Name = "feishu"

// callTimeout bounds one REST call made on the channel's own behalf.
const callTimeout = 30 * time.Second

// Channel is one Feishu app's bot connection.
type Channel struct {
	channels.Base
	cfg       Config
	workspace string
	http      *http.Client
	api       *api

	events *channels.InOrder[queued] // im.message.receive_v1 payloads
	// streamEvery spaces the updates of a streamed card (0: streaming off).
	streamEvery time.Duration

	reactMu   sync.Mutex
	reactions map[string]string // message id + emoji → reaction_id
}

// New builds the channel from config; it connects in Start.
func New(deps channels.Deps) (*Channel, error) {
	cfg, err := readConfig(deps.Config)
	if err != nil {
		return nil, err
	}
	if cfg.AppID == "" || cfg.AppSecret == "" {
		return nil, errors.New("channels.feishu.appId and appSecret must be set")
	}
	log := deps.Logger(Name)
	set := deps.Secrets
	if set == nil {
		set = &secrets.Set{}
	}
	set.Add(cfg.AppSecret)
	hc := &http.Client{Timeout: 2 * callTimeout}
	c := &Channel{
		cfg: cfg, workspace: deps.Workspace, http: hc,
		api:       newAPI(cfg, hc, set, log),
		reactions: map[string]string{},
	}
	// Feishu delivers an event again until it is acked, after a reconnect
	// too: the ids taken in are kept across restarts.
	c.Init(Name, log, deps.SeenSet("feishu-events", 4096, deps.StateFile("feishu-events.json")))
	c.events = channels.NewInOrder(log, "feishu message events", c.takeQueued)
	if cfg.Streaming {
		c.streamEvery = streamInterval
	}
	return c, nil
}

// Describe tells the gateway banner which bot this is.
func (c *Channel) Describe() string {
	id, name := c.Bot() // the bot's open_id and app name
	if id == "" {
		return fmt.Sprintf("app %s, bot identity unknown (bot/v3/info failed), groupPolicy %s", c.cfg.AppID, c.cfg.GroupPolicy)
	}
	return fmt.Sprintf("%s (%s), app %s, groupPolicy %s", name, id, c.cfg.AppID, c.cfg.GroupPolicy)
}

// Start checks the app's credentials (a tenant token, the bot's open_id),
// then holds the long connection in the background. Refused credentials
// fail the start; a network error only delays the connection.
func (c *Channel) Start(ctx context.Context, publish channels.Publish) error {
	ictx, cancel := context.WithTimeout(ctx, callTimeout)
	err := c.identify(ictx)
	cancel()
	switch {
	case err == nil:
		id, name := c.Bot()
		c.Log.Info("feishu bot identified", "bot", name, "open_id", id)
	case errors.Is(err, errCredentials):
		return fmt.Errorf("feishu refused channels.feishu.appId/appSecret: %w", err)
	default:
		// Without the bot's open_id a group mention is recognised by nanobot's heuristic.
		c.Log.Warn("feishu bot info failed; group mentions are guessed", "error", err)
	}
	c.Receive(ctx, publish, "feishu long connection", func(run context.Context) {
		defer c.events.Go(run)()
		c.connLoop(run)
	})
	return nil
}

// identify asks who the bot is: GET /open-apis/bot/v3/info.
func (c *Channel) identify(ctx context.Context) error {
	var got struct {
		Bot struct {
			AppName string `json:"app_name"`
			OpenID  string `json:"open_id"`
		} `json:"bot"`
	}
	if err := c.api.rest.Call(ctx, http.MethodGet, "/open-apis/bot/v3/info", nil, &got); err != nil {
		return err
	}
	if got.Bot.OpenID == "" {
		return errors.New("feishu bot info: no open_id in the answer")
	}
	c.SetBot(got.Bot.OpenID, got.Bot.AppName)
	return nil
}
