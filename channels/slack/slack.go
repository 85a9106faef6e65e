// Package slack is the Slack channel: Socket Mode in (DMs, app mentions,
// channel messages as groupPolicy allows), the Web API out (replies in the
// thread, mrkdwn, streamed by the manager through chat.update, the reactEmoji/doneEmoji
// reactions), with nanobot's channels.slack config.
package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// Name is the channel's name in config, routes and session keys.
const Name = "slack"

// MaxMessageLen is where nanobot splits a Slack message (Slack allows
// about 40 000 characters; the margin is nanobot's).
const MaxMessageLen = 39_000

// Channel is one Slack app connection (a bot token and an app token).
type Channel struct {
	channels.Base
	cfg       Config
	policy    policy
	workspace string
	api       *slack.Client
	sock      *socketmode.Client

	threads *channels.ThreadContext

	mu      sync.Mutex
	targets map[string]string // chat names the message tool used, resolved
	team    string
	queue   *channels.InOrder[request] // events and presses, handled in Slack's order
}

// New builds the channel from config. It does not connect: Start does.
func New(cfg *config.Config, deps channels.Deps) (*Channel, error) {
	s, err := readConfig(cfg)
	if err != nil {
		return nil, err
	}
	if s.Mode != "" && s.Mode != "socket" {
		return nil, fmt.Errorf("channels.slack.mode %q is not supported (only \"socket\")", s.Mode)
	}
	if s.BotToken == "" || s.AppToken == "" {
		return nil, errors.New("channels.slack needs botToken and appToken")
	}
	log := deps.Logger(Name)
	opts := []slack.Option{slack.OptionAppLevelToken(s.AppToken)}
	if s.APIBase != "" {
		base := s.APIBase
		if !strings.HasSuffix(base, "/") {
			base += "/"
		}
		opts = append(opts, slack.OptionAPIURL(base))
	}
	api := slack.New(s.BotToken, opts...)
	c := &Channel{
		cfg:       s,
		policy:    policy{cfg: s},
		workspace: deps.Workspace,
		api:       api,
		threads:   channels.NewThreadContext("Slack", s.ThreadContextLimit, log),
		targets:   map[string]string{},
	}
	// Envelopes, events and messages taken in; shared: Slack's retry may reach another gateway's connection.
	c.Init(Name, log, deps.SeenSet("slack-events", 10_000, ""))
	c.queue = channels.NewInOrder(log, "slack events", c.take)
	c.sock = socketmode.New(api, socketmode.OptionLog(slogWriter{log}))
	return c, nil
}

// Describe tells the gateway's banner who the bot is.
func (c *Channel) Describe() string {
	id, name := c.Bot()
	c.mu.Lock()
	defer c.mu.Unlock()
	who := "bot identity unknown (auth.test failed)"
	if id != "" {
		who = fmt.Sprintf("@%s (%s) in %s", name, id, c.team)
	}
	return "Socket Mode, " + who
}

// Start checks the bot token (auth.test), then connects Socket Mode and
// handles events until ctx ends or Stop is called. A refused token fails
// the start; a network error only delays it (the connection keeps retrying).
func (c *Channel) Start(ctx context.Context, publish channels.Publish) error {
	authCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	err := c.identify(authCtx)
	cancel()
	if err != nil {
		if isAuthError(err) {
			return fmt.Errorf("slack auth.test refused channels.slack.botToken: %w", err)
		}
		c.Log.Warn("slack auth.test failed; retrying once connected", "error", err)
	}
	c.Receive(ctx, publish, "slack channel", func(run context.Context) {
		defer c.queue.Go(run)()
		var conn sync.WaitGroup
		conn.Go(func() { c.connect(run) })
		c.receive(run)
		conn.Wait()
	})
	return nil
}

// identify asks Slack who the bot is, to recognise its mentions and its own messages.
func (c *Channel) identify(ctx context.Context) error {
	auth, err := c.api.AuthTestContext(ctx)
	if err != nil {
		return err
	}
	c.SetBot(auth.UserID, auth.User)
	c.mu.Lock()
	c.team = auth.Team
	c.mu.Unlock()
	c.Log.Info("slack bot identified", "user_id", auth.UserID, "user", auth.User, "team", auth.Team)
	return nil
}

// connect runs the Socket Mode connection, reconnecting with backoff when
// it ends (slack-go reconnects by itself; this covers the errors it gives up on).
func (c *Channel) connect(ctx context.Context) {
	c.Reconnect(ctx, channels.Backoff{}, func(ctx context.Context) error {
		err := c.sock.RunContext(ctx)
		if isAuthError(err) {
			return channels.Fatal(fmt.Errorf("Slack refused channels.slack.appToken (it must be an app-level token, xapp-…, with connections:write): %w", err))
		}
		return fmt.Errorf("slack socket mode connection ended: %w", err)
	})
}

// slogWriter sends slack-go's log lines to our logger at debug level.
type slogWriter struct{ log *slog.Logger }

func (w slogWriter) Output(_ int, s string) error {
	w.log.Debug(strings.TrimSpace(s), "source", "slack-go")
	return nil
}
