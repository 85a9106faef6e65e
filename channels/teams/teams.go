// Package teams is the Microsoft Teams channel (nanobot's msteams): the
// Bot Framework's activities POSTed to an endpoint the gateway serves, each
// carrying a JWT the Bot Connector signed, and replies through the
// connector's REST API with the bot's AAD token. Personal chats, and
// channels and group chats when the bot is @-mentioned; replies streamed
// by editing one message; approvals as an Adaptive Card.
package teams

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/jwks"
	"github.com/nanobot-durable/nanobot/internal/hostcheck"
)

// Name is the channel's name in config, routes and session keys (nanobot's).
const Name = "msteams"

// Limits of the endpoint and the platform.
const (
	maxActivity  = 1 << 20 // bytes of one inbound activity
	callTimeout  = 30 * time.Second
	maxTextRunes = 20_000 // Teams refuses messages past about 28 KB
	streamEvery  = 1500 * time.Millisecond
)

// Channel is one Teams bot: its endpoint and its connector client.
type Channel struct {
	channels.Base
	cfg      Config
	endpoint *channels.Endpoint
	auth     *verifier
	api      *channels.API // the Bot Connector's, with the bot's token
	// convs keep where each conversation that wrote is served (its
	// serviceUrl): replies go there, after a restart too.
	convs channels.StateStore
}

// New builds the channel from channels.msteams; Start listens.
func New(deps channels.Deps) (*Channel, error) {
	cfg, err := channels.StartBlock(deps.Config, Name, defaults)
	if err != nil {
		return nil, err
	}
	if !cfg.ValidateInboundAuth && !hostcheck.Loopback(cfg.Host) {
		return nil, channels.Unsafe(fmt.Errorf("channels.msteams.host %s reaches beyond this machine and channels.msteams.validateInboundAuth is false, so anyone who reaches it could drive the agent as any user: turn it on (or host 127.0.0.1) in %s", cfg.Host, deps.Config.Path))
	}
	hc := &http.Client{Timeout: callTimeout}
	c := &Channel{cfg: cfg, endpoint: channels.NewEndpoint("msteams endpoint", cfg.Host, cfg.Port,
		channels.Hosts{Allowed: cfg.AllowedHosts, Setting: "channels.msteams.allowedHosts"})}
	c.Init(Name, deps.Logger(Name), deps.SeenSet("msteams-activities", 4096, deps.StateFile("msteams-activities.json")))
	api, public := newConnector(cfg, hc, deps.Secrets)
	c.api, c.auth = api, &verifier{keys: &jwks.Keys{Metadata: cfg.OpenIDMetadata, API: public}, appID: cfg.AppID}
	c.convs = deps.ChannelState(Name, deps.StateFile("msteams-conversations.json"))
	return c, nil
}

// Describe tells the banner where the endpoint listens.
func (c *Channel) Describe() string {
	return fmt.Sprintf("http://%s%s for app %s, groupPolicy %s", c.endpoint.Addr(), c.cfg.Path, c.cfg.AppID, c.cfg.GroupPolicy)
}

// Start implements channels.Channel: it listens, then serves in the background.
func (c *Channel) Start(_ context.Context, publish channels.Publish) error {
	c.Attach(publish) // before the server's goroutine starts
	if err := c.endpoint.Listen(c, c.Log); err != nil {
		return err
	}
	c.Up() // the platform reaches the bot from now on
	if !c.cfg.ValidateInboundAuth {
		c.Log.Warn("channels.msteams.validateInboundAuth is false: any local process can post activities as any user")
	}
	return nil
}

// Stop implements channels.Channel: open requests finish, then the endpoint closes.
func (c *Channel) Stop(ctx context.Context) error {
	c.Down()
	return c.endpoint.Shutdown(ctx)
}

// ServeHTTP takes one activity in: from the connector (its JWT checked),
// never from a browser. It answers once the agent took the message, or
// 500 when it did not, so the connector's retry is taken in.
func (c *Channel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path != c.cfg.Path:
		http.NotFound(w, r)
		return
	case r.Method != http.MethodPost:
		http.Error(w, "POST activities here", http.StatusMethodNotAllowed)
		return
	case r.Header.Get("Origin") != "":
		http.Error(w, "the Bot Connector sends no Origin: browsers may not post here", http.StatusForbidden)
		return
	}
	var a activity
	if err := channels.ReadJSON(w, r, maxActivity, &a); err != nil {
		c.Log.Warn("msteams activity dropped: not JSON", "error", err)
		http.Error(w, "not an activity", http.StatusBadRequest)
		return
	}
	if c.cfg.ValidateInboundAuth {
		if err := c.auth.check(r.Context(), r.Header.Get("Authorization"), a.ServiceURL); err != nil {
			c.Log.Warn("msteams activity refused: its token does not hold", "activity_id", a.ID, "error", err)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
	}
	if !channels.Handed(c.take(r.Context(), a)) {
		http.Error(w, "not taken", http.StatusInternalServerError) // TakeIn logged why
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("{}"))
}
