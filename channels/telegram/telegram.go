// Package telegram is the Telegram channel: long polling through the Bot API
// (go-telegram/bot), access through the channel manager, replies rendered
// from Markdown to Telegram HTML, streamed by the manager editing one message.
package telegram

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// Name is the channel's name in routes, session keys and config.
const Name = "telegram"

// MaxMessageRunes is where a reply is split: Telegram takes 4096 characters
// a message; the margin leaves room for a code fence closed at a cut.
const MaxMessageRunes = 4000

// Timing of the connection.
const (
	// pollTimeout is how long Telegram may hold a getUpdates call open.
	pollTimeout = 30 * time.Second
	// minPoll spaces getUpdates calls a server answers at once.
	minPoll = 500 * time.Millisecond
	// callTimeout bounds one Bot API call made outside a delivery.
	callTimeout = 30 * time.Second
)

// Channel is a Telegram bot connection.
type Channel struct {
	channels.Base
	cfg       Config
	workspace string
	apiBase   string
	http      *transport

	bot *bot.Bot
	me  *models.User

	warned sync.Map // Bot API method → logged once
}

// Connected implements channels.Connector: the Bot API answered the last call.
func (c *Channel) Connected() bool { return c.http.answered.Load() }

// New builds the channel from the gateway's config; it connects in Start.
func New(deps channels.Deps) (*Channel, error) {
	if deps.Config == nil {
		return nil, errors.New("telegram: no config")
	}
	cfg, err := readConfig(deps.Config)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(cfg.Token) == "" {
		return nil, errors.New("channels.telegram.token is not set")
	}
	if cfg.Mode != "" && cfg.Mode != "polling" {
		return nil, fmt.Errorf("channels.telegram.mode %q is not supported by this build: use \"polling\"", cfg.Mode)
	}
	if cfg.StreamEditInterval < 0.1 {
		cfg.StreamEditInterval = 0.1 // nanobot's floor
	}
	base := strings.TrimRight(strings.TrimSpace(cfg.APIBase), "/")
	if base == "" {
		base = "https://api.telegram.org"
	}
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("channels.telegram.apiBase %q is not an http(s) URL", cfg.APIBase)
	}
	hc := &http.Client{Timeout: pollTimeout + 15*time.Second}
	if p := strings.TrimSpace(cfg.Proxy); p != "" {
		pu, err := url.Parse(p)
		if err != nil {
			return nil, fmt.Errorf("channels.telegram.proxy: %w", err)
		}
		hc.Transport = &http.Transport{Proxy: http.ProxyURL(pu)}
	}
	log := deps.Logger(Name)
	c := &Channel{
		cfg: cfg, workspace: deps.Workspace, apiBase: base,
		http: &transport{client: hc, minPoll: minPoll},
	}
	file := ""
	if deps.Config.Path != "" {
		file = filepath.Join(config.ConfigDir(deps.Config.Path), "channels", "telegram-updates.json")
	}
	c.Init(Name, log, deps.SeenSet("telegram-updates", 4096, file)) // update ids handled
	return c, nil
}

// Describe tells the gateway banner which bot this is.
func (c *Channel) Describe() string {
	if c.me == nil {
		return "not connected"
	}
	return fmt.Sprintf("@%s (polling %s)", c.me.Username, c.apiBase)
}

// Start implements channels.Channel: it checks the token with getMe, then
// polls for updates until ctx ends or Stop is called.
func (c *Channel) Start(ctx context.Context, publish channels.Publish) error {
	b, err := bot.New(c.cfg.Token,
		bot.WithServerURL(c.apiBase),
		bot.WithHTTPClient(pollTimeout, c.http),
		bot.WithSkipGetMe(),
		bot.WithNotAsyncHandlers(), // one update at a time: a chat's messages keep their order
		bot.WithAllowedUpdates(bot.AllowedUpdates{"message", "callback_query"}), // callback_query: approval buttons
		bot.WithDefaultHandler(c.onUpdate),
		bot.WithErrorsHandler(func(err error) { c.Log.Warn("telegram polling error", "error", err) }),
	)
	if err != nil {
		return fmt.Errorf("telegram: %w", err)
	}
	getMeCtx, cancel := context.WithTimeout(ctx, callTimeout)
	me, err := b.GetMe(getMeCtx)
	cancel()
	if err != nil {
		return fmt.Errorf("telegram getMe at %s (is the token right?): %w", c.apiBase, err)
	}
	c.bot, c.me = b, me
	c.Receive(ctx, publish, "telegram polling", b.Start)
	c.Log.Info("telegram bot connected", "bot", "@"+me.Username, "api", c.apiBase)
	return nil
}

// warnOnce logs a failed best-effort call (typing, reactions) the first
// time that method fails: a server without it must not flood the log.
func (c *Channel) warnOnce(method string, err error) {
	if _, seen := c.warned.LoadOrStore(method, true); seen {
		return
	}
	c.Log.Warn("telegram "+method+" failed; replies still go out (logged once)", "error", err)
}
