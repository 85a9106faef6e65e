// Package qq is the QQ channel, on the official QQ Bot API spoken
// directly: an app access token, the gateway WebSocket in (C2C messages
// and group @-messages) and the REST API out (passive replies carrying the
// user's msg_id and a msg_seq per part, files through the rich-media API).
package qq

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
)

// Name is the channel's name in config, routes and session keys.
const Name = "qq"

// callTimeout bounds one REST call made on the channel's own behalf.
const callTimeout = 30 * time.Second

// Channel is one QQ bot connection.
type Channel struct {
	channels.Base
	cfg       Config
	workspace string
	seenFile  string // where the message ids taken in are kept ("": memory or the database)
	http      *http.Client
	tokens    channels.TokenCache
	api       *channels.API // QQ's REST API with the access token

	groups channels.SeenKeys // chat ids that are groups: their replies go to /v2/groups
	seqs   *seqs             // msg_seq per replied-to msg_id

}

// New builds the channel from config; it connects in Start.
func New(deps channels.Deps) (*Channel, error) {
	cfg, err := channels.ValidBlock(deps.Config, Name, defaults)
	if err != nil {
		return nil, err
	}
	if cfg.AppID == "" || cfg.Secret == "" {
		return nil, errors.New("channels.qq.appId and channels.qq.secret are required")
	}
	hc := &http.Client{Timeout: 2 * callTimeout}
	c := &Channel{cfg: cfg, workspace: deps.Workspace, http: hc, seqs: newSeqs()}
	c.tokens = channels.TokenCache{Fetch: c.fetchToken, Secrets: deps.Secrets}
	c.api = &channels.API{Name: Name, Base: cfg.apiBase(), HTTP: hc, Tokens: &c.tokens, Scheme: "QQBot", RetryRefused: true, Judge: judge}
	c.seenFile = deps.StateFile("qq-messages.json")
	// A resumed session replays what it missed: a message is taken in once.
	c.Init(Name, deps.Logger(Name), deps.SeenSet("qq-messages", 4096, c.seenFile))
	// Shared too: the reply to a group may be delivered by another gateway
	// than the one that took the message in, and it must post to the group.
	c.groups = deps.SeenSet("qq-groups", 4096, deps.StateFile("qq-groups.json"))
	return c, nil
}

// Describe tells the gateway banner which bot this is.
func (c *Channel) Describe() string {
	id, name := c.Bot()
	if id == "" {
		return fmt.Sprintf("app %s (connecting), msgFormat %s", c.cfg.AppID, c.cfg.MsgFormat)
	}
	return fmt.Sprintf("%s (%s), app %s, msgFormat %s", name, id, c.cfg.AppID, c.cfg.MsgFormat)
}

// Start fetches an access token (refused credentials fail the start; a
// network error only delays the gateway), then runs the gateway in the
// background until ctx ends or Stop is called.
func (c *Channel) Start(ctx context.Context, publish channels.Publish) error {
	tctx, cancel := context.WithTimeout(ctx, callTimeout)
	_, err := c.tokens.Get(tctx)
	cancel()
	switch {
	case errors.Is(err, errBadCredentials):
		return fmt.Errorf("qq: %w", err)
	case err != nil:
		c.Log.Warn("qq access token not fetched yet; the gateway keeps trying", "error", err)
	default:
		c.whoAmI(ctx)
	}
	c.Receive(ctx, publish, "qq gateway", c.runGateway)
	return nil
}

// whoAmI asks GET /users/@me who the bot is, for the banner; READY tells it too.
func (c *Channel) whoAmI(ctx context.Context) {
	mctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var me struct {
		ID       string `json:"id"`
		Username string `json:"username"`
	}
	if err := c.api.Call(mctx, http.MethodGet, "/users/@me", nil, &me); err != nil || me.ID == "" {
		c.Log.Warn("qq users/@me failed; READY will say who the bot is", "error", err)
		return
	}
	c.SetBot(me.ID, me.Username)
}
