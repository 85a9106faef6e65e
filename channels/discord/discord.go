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
	"sync/atomic"
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
	// maxOpenBackoff caps the wait between attempts to open the gateway.
	maxOpenBackoff = time.Minute
)

// Channel is one Discord bot connection.
type Channel struct {
	cfg       Config
	workspace string
	log       *slog.Logger
	http      *http.Client
	api       *discordgo.Session

	up     atomic.Bool       // the gateway socket is open
	seen   channels.SeenKeys // message and interaction ids taken in
	events chan gatewayEvent // MESSAGE_CREATE and INTERACTION_CREATE payloads, handled in order
	// streamEvery spaces the edits of a streamed message (0: streaming off).
	streamEvery time.Duration
	working     *workingEmojis

	mu      sync.Mutex
	botID   string
	botName string
	publish channels.Publish
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
	log := deps.Log
	if log == nil {
		log = slog.Default()
	}
	log = log.With("channel", Name)
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
		cfg: cfg, workspace: deps.Workspace, log: log, http: hc, api: api,
		seen:   deps.SeenSet("discord-messages", 4096, ""),
		events: make(chan gatewayEvent, 256),
	}
	if cfg.Streaming {
		c.streamEvery = streamInterval
	}
	c.working = newWorkingEmojis(c)
	api.AddHandler(c.onEvent)
	api.AddHandler(c.onConnect)
	api.AddHandler(func(_ *discordgo.Session, _ *discordgo.Disconnect) {
		c.up.Store(false)
		c.log.Info("discord gateway disconnected; discordgo reconnects and resumes")
	})
	api.AddHandler(func(_ *discordgo.Session, _ *discordgo.Resumed) {
		c.up.Store(true)
		c.log.Info("discord gateway session resumed")
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

// Connected implements channels.Connector.
func (c *Channel) Connected() bool { return c.up.Load() }

// Name implements channels.Channel.
func (c *Channel) Name() string { return Name }

// Describe tells the gateway banner which bot this is.
func (c *Channel) Describe() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.botID == "" {
		return "bot identity unknown (users/@me failed; connecting)"
	}
	return fmt.Sprintf("@%s (%s), groupPolicy %s", c.botName, c.botID, c.cfg.GroupPolicy)
}

// Start checks the token (users/@me), then opens the gateway in the
// background and handles messages until ctx ends or Stop is called. A
// refused token fails the start; a network error only delays the gateway.
func (c *Channel) Start(ctx context.Context, publish channels.Publish) error {
	runCtx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	c.publish, c.runCtx, c.cancel = publish, runCtx, cancel
	c.mu.Unlock()
	meCtx, done := context.WithTimeout(ctx, callTimeout)
	me, err := c.api.User("@me", discordgo.WithContext(meCtx))
	done()
	switch {
	case err == nil:
		c.setBot(me.ID, me.Username)
		c.log.Info("discord bot identified", "bot", "@"+me.Username, "id", me.ID)
	case isAuthError(err):
		cancel()
		return fmt.Errorf("discord refused channels.discord.token (users/@me): %w", err)
	default:
		c.log.Warn("discord users/@me failed; the gateway's READY will say who the bot is", "error", err)
	}
	c.wg.Add(2)
	go func() { defer c.wg.Done(); c.open(runCtx) }()
	go func() { defer c.wg.Done(); c.handleQueue(runCtx) }()
	return nil
}

// open connects the gateway, retrying with backoff until it is up; from
// then on discordgo reconnects and resumes by itself.
func (c *Channel) open(ctx context.Context) {
	delay := time.Second
	for {
		err := c.api.Open()
		if err == nil || errors.Is(err, discordgo.ErrWSAlreadyOpen) {
			return
		}
		wait := delay
		var closed *websocket.CloseError
		if errors.As(err, &closed) && fatalClose[closed.Code] != "" {
			c.log.Error("discord gateway refused the bot: "+fatalClose[closed.Code], "code", closed.Code)
			wait = 5 * time.Minute
		} else {
			c.log.Warn("discord gateway not reachable; retrying", "error", err, "in", wait)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		delay = min(delay*2, maxOpenBackoff)
	}
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
	c.up.Store(true)
	c.log.Info("discord gateway connected")
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

func (c *Channel) setBot(id, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.botID, c.botName = id, name
}

func (c *Channel) bot() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.botID
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
