package qq

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/botgateway"
)

// healthyAfter is how long a session must have run for a drop to be
// churn, reconnected after the shortest wait.
const healthyAfter = 10 * time.Second

// banned is why QQ closed with a code saying the bot cannot be served now.
const banned = "the bot is offline, sandbox-only, banned, or lacks the intents asked for (check it in q.qq.com)"

// runGateway holds QQ's bot gateway until ctx ends: C2C and group
// messages are handled in the gateway's order.
func (c *Channel) runGateway(ctx context.Context) {
	botgateway.Run(ctx, &c.Base, botgateway.Spec{
		URL:     c.gatewayURL,
		Token:   c.tokens.Get,
		Auth:    authHeader,
		Intents: intents,
		// intents QQ does not know (4013) or the bot may not have (4014); the bot offline, sandbox-only (4914) or banned (4915)
		Fatal: map[int]string{4013: banned, 4014: banned, 4914: banned, 4915: banned},
		Fresh: []int{4006, 4007}, // the session id is unknown, the seq wrong: identify
		// the access token expired (4004): fetch a new one
		Expired: 4004, Invalidate: c.tokens.Invalidate,
		Backoff: channels.Backoff{Healthy: healthyAfter},
	}, c.onDispatch)
}

// onDispatch handles the gateway's events the channel takes in.
func (c *Channel) onDispatch(ctx context.Context, d botgateway.Dispatch) {
	switch d.Type {
	case eventC2CMessage, eventGroupMessage:
		c.handle(ctx, d)
	default:
		c.Log.Debug("qq gateway event ignored", "type", d.Type, "seq", d.Seq)
	}
}

// gatewayURL asks GET /gateway where the WebSocket is.
func (c *Channel) gatewayURL(ctx context.Context) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var out struct {
		URL string `json:"url"`
	}
	if err := c.api.Call(cctx, http.MethodGet, "/gateway", nil, &out); err != nil {
		return "", err
	}
	if out.URL == "" {
		return "", errors.New("qq GET /gateway: no url")
	}
	return out.URL, nil
}
