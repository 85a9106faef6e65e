// Package dingtalk is the DingTalk channel: Stream mode in (a WebSocket the
// app opens to DingTalk, carrying the robot's messages from direct chats
// and from groups where it is @-mentioned), and out through the message's
// sessionWebhook while it is valid, else the robot send API with the app's
// access token: Markdown, pictures and files.
package dingtalk

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/secrets"
)

// Name is the channel's name in config, routes and session keys.
const Name = "dingtalk"

// callTimeout bounds one API call made on the channel's own behalf.
const callTimeout = 30 * time.Second

// Channel is one DingTalk app's robot.
type Channel struct {
	channels.Base
	cfg       Config
	api, oapi string // API bases: DingTalk's or apiBase
	workspace string
	http      *http.Client
	secrets   *secrets.Set
	tokens    channels.TokenCache
	// rest is the v1.0 API with the access token, legacy the older one
	// (uploads), public the v1.0 API without (the token, the stream).
	rest, legacy, public *channels.API
	hooks                *sessionHooks // sessionWebhooks of recent messages
}

// New builds the channel from config; it connects in Start.
func New(deps channels.Deps) (*Channel, error) {
	cfg, err := readConfig(deps.Config)
	if err != nil {
		return nil, err
	}
	if cfg.ClientID == "" || cfg.ClientSecret == "" {
		return nil, errors.New("channels.dingtalk.clientId and clientSecret are not set")
	}
	c := &Channel{
		cfg: cfg, workspace: deps.Workspace,
		http: &http.Client{Timeout: 60 * time.Second}, secrets: deps.Secrets,
		hooks: newSessionHooks(1024),
	}
	// DingTalk pushes again what was not acknowledged, after a restart too.
	c.Init(Name, deps.Logger(Name), deps.SeenSet("dingtalk-messages", 4096, deps.StateFile("dingtalk-messages.json")))
	c.api, c.oapi = cfg.bases()
	c.tokens = channels.TokenCache{Fetch: c.fetchToken, Secrets: deps.Secrets}
	c.rest, c.legacy, c.public = c.newAPI(c.api, tokenHeader), c.newAPI(c.oapi, "access_token"), c.newAPI(c.api, "")
	return c, nil
}

// Describe tells the gateway banner which app this is.
func (c *Channel) Describe() string {
	return fmt.Sprintf("app %s, Stream mode", c.cfg.ClientID)
}

// Start checks the credentials (an access token), then runs the stream in
// the background until ctx ends or Stop is called. Refused credentials
// fail the start; a network error only delays the stream.
func (c *Channel) Start(ctx context.Context, publish channels.Publish) error {
	tctx, cancel := context.WithTimeout(ctx, callTimeout)
	_, err := c.tokens.Get(tctx)
	cancel()
	switch {
	case channels.IsPermanent(err) && channels.StatusOf(err) >= 400:
		return fmt.Errorf("dingtalk refused channels.dingtalk.clientId/clientSecret: %w", err)
	case err != nil:
		c.Log.Warn("dingtalk access token not fetched yet; the stream connects anyway", "error", err)
	}
	c.Receive(ctx, publish, "dingtalk stream", c.run)
	return nil
}
