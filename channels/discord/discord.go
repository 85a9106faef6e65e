// Package discord is the Discord channel: the gateway (botgateway) in —
// DMs, and guild channels and threads as nanobot's groupPolicy allows —
// and the REST API (discordgo) out: replies referencing the user's message, files,
// typing, reactions, streaming by editing one message.
package discord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/wsconn"
)

// Name is the channel's name in config, routes and session keys.
const Name = "discord"

// Timing of the connection.
const (
	// callTimeout bounds one REST call made on the channel's own behalf.
	callTimeout = 30 * time.Second
)

// Channel is one Discord bot connection.
type Channel struct {
	channels.Base
	cfg       Config
	workspace string
	http      *http.Client
	dial      wsconn.Options     // the gateway's socket, through channels.discord.proxy
	api       *discordgo.Session // REST, and the state of the channels READY and GUILD_CREATE announced

	// streamEvery spaces the edits of a streamed message (0: streaming off).
	streamEvery time.Duration
	working     *workingEmojis
}

// New builds the channel from config; it connects in Start.
func New(deps channels.Deps) (*Channel, error) {
	cfg, err := readConfig(deps.Config)
	if err != nil {
		return nil, err
	}
	if cfg.Token == "" {
		return nil, errors.New("channels.discord.token is not set")
	}
	log := deps.Logger(Name)
	hc, proxy, err := clients(cfg)
	if err != nil {
		return nil, err
	}
	api, err := discordgo.New(botToken(cfg.Token))
	if err != nil {
		return nil, fmt.Errorf("discord: %w", err)
	}
	api.Client = hc
	api.ShouldRetryOnRateLimit = false // a 429 goes back to delivery, which waits retry_after
	api.LogLevel = discordgo.LogWarning
	api.State.TrackMembers, api.State.TrackPresences, api.State.TrackVoice = false, false, false
	api.State.TrackEmojis, api.State.TrackRoles = false, false
	routeLibraryLog()
	c := &Channel{
		cfg: cfg, workspace: deps.Workspace, http: hc, api: api,
		dial: wsconn.Options{Proxy: proxy, MaxMessage: maxFrame},
	}
	c.Init(Name, log, deps.SeenSet("discord-messages", 4096, ""))
	if cfg.Streaming {
		c.streamEvery = streamInterval
	}
	c.working = newWorkingEmojis(c)
	return c, nil
}

// botToken is the Authorization header value: nanobot's token is the bare bot token.
func botToken(token string) string {
	if len(token) > 4 && token[:4] == "Bot " {
		return token
	}
	return "Bot " + token
}

// Describe tells the gateway banner which bot this is.
func (c *Channel) Describe() string {
	id, name := c.Bot()
	if id == "" {
		return "bot identity unknown (users/@me failed; connecting)"
	}
	return fmt.Sprintf("@%s (%s), groupPolicy %s", name, id, c.cfg.GroupPolicy)
}

// Start checks the token (users/@me), then holds the gateway in the
// background and handles messages until ctx ends or Stop is called. A
// refused token fails the start; a network error only delays the gateway.
func (c *Channel) Start(ctx context.Context, publish channels.Publish) error {
	meCtx, done := context.WithTimeout(ctx, callTimeout)
	me, err := c.api.User("@me", discordgo.WithContext(meCtx))
	done()
	switch {
	case err == nil:
		c.SetBot(me.ID, me.Username)
		c.Log.Info("discord bot identified", "bot", "@"+me.Username, "id", me.ID)
	case isAuthError(err):
		return fmt.Errorf("discord refused channels.discord.token (users/@me): %w", err)
	default:
		c.Log.Warn("discord users/@me failed; the gateway's READY will say who the bot is", "error", err)
	}
	c.Receive(ctx, publish, "discord gateway", c.runGateway)
	return nil
}

// Stop implements channels.Channel: the gateway closes, the handlers end.
func (c *Channel) Stop(ctx context.Context) error {
	err := c.Base.Stop(ctx)
	c.working.stopAll()
	return err
}

var libraryLog sync.Once

// routeLibraryLog sends discordgo's log lines (a package-wide hook) to slog.
func routeLibraryLog() {
	libraryLog.Do(func() {
		discordgo.Logger = func(level, _ int, format string, a ...any) {
			l := slog.LevelDebug
			switch level {
			case discordgo.LogError:
				l = slog.LevelError
			case discordgo.LogWarning:
				l = slog.LevelWarn
			}
			slog.Default().Log(context.Background(), l, fmt.Sprintf(format, a...), "source", "discordgo", "channel", Name)
		}
	})
}
