// Package discord is the Discord channel: the gateway (discordgo) in —
// DMs, and guild channels and threads as nanobot's groupPolicy allows —
// and the REST API out: replies referencing the user's message, files,
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
	"github.com/gorilla/websocket"

	"github.com/nanobot-durable/nanobot/channels"
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
	api       *discordgo.Session

	events chan gatewayEvent // MESSAGE_CREATE and INTERACTION_CREATE payloads, handled in order
	// streamEvery spaces the edits of a streamed message (0: streaming off).
	streamEvery time.Duration
	working     *workingEmojis

	mu      sync.Mutex
	runCtx  context.Context
	cancel  context.CancelFunc
	stopped bool
	wg      sync.WaitGroup
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
	hc, dialer, err := clients(cfg)
	if err != nil {
		return nil, err
	}
	api, err := discordgo.New(botToken(cfg.Token))
	if err != nil {
		return nil, fmt.Errorf("discord: %w", err)
	}
	api.Client, api.Dialer = hc, dialer
	api.Identify.Intents = discordgo.Intent(cfg.Intents)
	api.ShouldRetryOnRateLimit = false // a 429 goes back to delivery, which waits retry_after
	api.SyncEvents = true              // events in the gateway's order; the handler only queues them
	api.LogLevel = discordgo.LogWarning
	api.State.TrackMembers, api.State.TrackPresences, api.State.TrackVoice = false, false, false
	api.State.TrackEmojis, api.State.TrackRoles = false, false
	routeLibraryLog()
	c := &Channel{
		cfg: cfg, workspace: deps.Workspace, http: hc, api: api,
		events: make(chan gatewayEvent, 256),
	}
	c.Init(Name, log, deps.SeenSet("discord-messages", 4096, ""))
	if cfg.Streaming {
		c.streamEvery = streamInterval
	}
	c.working = newWorkingEmojis(c)
	api.AddHandler(c.onEvent)
	api.AddHandler(c.onConnect)
	api.AddHandler(func(_ *discordgo.Session, _ *discordgo.Disconnect) {
		c.Down()
		c.Log.Info("discord gateway disconnected; discordgo reconnects and resumes")
	})
	api.AddHandler(func(_ *discordgo.Session, _ *discordgo.Resumed) {
		c.Up()
		c.Log.Info("discord gateway session resumed")
	})
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

// Start checks the token (users/@me), then opens the gateway in the
// background and handles messages until ctx ends or Stop is called. A
// refused token fails the start; a network error only delays the gateway.
func (c *Channel) Start(ctx context.Context, publish channels.Publish) error {
	runCtx, cancel := context.WithCancel(ctx)
	c.Attach(publish)
	c.mu.Lock()
	c.runCtx, c.cancel = runCtx, cancel
	c.mu.Unlock()
	meCtx, done := context.WithTimeout(ctx, callTimeout)
	me, err := c.api.User("@me", discordgo.WithContext(meCtx))
	done()
	switch {
	case err == nil:
		c.SetBot(me.ID, me.Username)
		c.Log.Info("discord bot identified", "bot", "@"+me.Username, "id", me.ID)
	case isAuthError(err):
		cancel()
		return fmt.Errorf("discord refused channels.discord.token (users/@me): %w", err)
	default:
		c.Log.Warn("discord users/@me failed; the gateway's READY will say who the bot is", "error", err)
	}
	c.wg.Add(2)
	go func() { defer c.wg.Done(); c.open(runCtx) }()
	go func() { defer c.wg.Done(); c.handleQueue(runCtx) }()
	return nil
}

// open connects the gateway, retrying with backoff until it is up; from
// then on discordgo reconnects and resumes by itself.
func (c *Channel) open(ctx context.Context) {
	c.Reconnect(ctx, channels.Backoff{}, func(ctx context.Context) error {
		err := c.api.Open()
		if err == nil || errors.Is(err, discordgo.ErrWSAlreadyOpen) {
			<-ctx.Done() // discordgo's own loop keeps the gateway from here
			return ctx.Err()
		}
		var closed *websocket.CloseError
		if errors.As(err, &closed) && fatalClose[closed.Code] != "" {
			return channels.Fatal(fmt.Errorf("discord gateway refused the bot: %s: %w", fatalClose[closed.Code], err))
		}
		return fmt.Errorf("discord gateway not reachable: %w", err)
	})
}

// fatalClose are gateway close codes a new attempt cannot fix by itself.
var fatalClose = map[int]string{
	4004: "authentication failed (check channels.discord.token)",
	4010: "invalid shard",
	4011: "sharding required",
	4012: "invalid API version",
	4013: "invalid intents (check channels.discord.intents)",
	4014: "disallowed intents: enable the Message Content intent for the bot in Discord's developer portal, or lower channels.discord.intents",
}

// onConnect closes a connection discordgo's reconnect loop opened after Stop.
func (c *Channel) onConnect(s *discordgo.Session, _ *discordgo.Connect) {
	c.mu.Lock()
	stopped := c.stopped
	c.mu.Unlock()
	if stopped {
		go func() { _ = s.Close() }()
		return
	}
	c.Up()
	c.Log.Info("discord gateway connected")
}

// Stop implements channels.Channel: the gateway closes, the handlers end.
func (c *Channel) Stop(ctx context.Context) error {
	c.mu.Lock()
	cancel := c.cancel
	c.stopped = true
	c.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	c.working.stopAll()
	err := c.api.Close()
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("discord channel did not stop in time: %w", ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("discord gateway close: %w", err)
	}
	return nil
}

// callCtx bounds a REST call made on the channel's own behalf.
func (c *Channel) callCtx() (context.Context, context.CancelFunc) {
	c.mu.Lock()
	parent := c.runCtx
	c.mu.Unlock()
	if parent == nil {
		parent = context.Background()
	}
	return context.WithTimeout(parent, callTimeout)
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
