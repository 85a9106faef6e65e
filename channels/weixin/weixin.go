// Package weixin is the personal WeChat channel over the iLink bot API:
// a QR login (`nanobot channels login weixin`), a getupdates long poll in
// (DMs, and groups as nanobot takes them: a @chatroom sender), replies out
// with sendmessage carrying the user's context_token, and typing.
package weixin

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/secrets"
)

// Name is the channel's name in config, routes and session keys.
const Name = "weixin"

// callTimeout bounds a sendmessage, getconfig, sendtyping.
const callTimeout = 15 * time.Second

// Backoff between failed polls, and how often an expired session looks
// for a new login (vars: tests shorten them).
var (
	expiredRecheck = 5 * time.Second
	minBackoff     = 2 * time.Second
	maxBackoff     = 30 * time.Second
)

// expiredHint is what the log and a failed send say when the login ended.
const expiredHint = "WeChat login expired: run `nanobot channels login weixin` to scan again"

// Channel is one WeChat bot account.
type Channel struct {
	channels.Base
	cfg       Config
	dir       string // where account.json lives
	workspace string
	secrets   *secrets.Set
	http      *http.Client

	expired atomic.Bool // WeChat said -14: a new login is needed

	mu sync.Mutex
	// saveMu orders snapshot and write of account.json, so an older snapshot never lands last.
	saveMu  sync.Mutex
	api     *client
	acct    account
	tickets map[string]string    // user → typing ticket
	tokenAt map[string]time.Time // user → when their context token came (zero: from a previous run)
	// shared is the context tokens of every gateway on the database (nil: account.json only).
	shared channels.StateStore
}

// New builds the channel from config and the stored login; it polls in Start.
func New(deps channels.Deps) (*Channel, error) {
	cfg, err := channels.Block(deps.Config, Name, defaults)
	if err != nil {
		return nil, err
	}
	home := deps.Home
	if home == "" {
		home = homeOf(deps.Config)
	}
	log := deps.Logger(Name)
	c := &Channel{
		cfg: cfg, dir: stateDir(cfg, home), workspace: deps.Workspace,
		secrets: deps.Secrets, http: &http.Client{}, tickets: map[string]string{}, tokenAt: map[string]time.Time{},
	}
	if deps.State != nil {
		c.shared = deps.State(Name)
	}
	file := ""
	if c.dir != "" {
		file = filepath.Join(c.dir, seenFile)
	}
	c.Init(Name, log, deps.SeenSet("weixin-messages", 1024, file))
	if err := c.loadLogin(); err != nil {
		return nil, err
	}
	if c.acct.Token == "" {
		return nil, errors.New("no WeChat login: run `nanobot channels login weixin`")
	}
	return c, nil
}

// loadLogin reads account.json; a token set in the config is used only
// when no QR login is stored (nanobot lets a QR login replace it too).
func (c *Channel) loadLogin() error {
	a, err := loadAccount(c.dir)
	if err != nil {
		return err
	}
	if c.cfg.Token != "" && a.Token == "" {
		a.Token = c.cfg.Token
	}
	if a.ContextTokens == nil {
		a.ContextTokens = map[string]string{}
	}
	base := a.BaseURL
	if base == "" {
		base = c.cfg.BaseURL
	}
	if c.secrets != nil {
		c.secrets.Add(a.Token)
	}
	tag, err := c.cfg.routeTag()
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acct = a
	c.api = newClient(c.http, base, a.Token, tag)
	return nil
}

// Describe tells the gateway banner which account this is.
func (c *Channel) Describe() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	who := c.acct.BotID
	if who == "" {
		who = "token from config"
	}
	return fmt.Sprintf("bot %s (polling %s)", who, c.api.Base)
}

// Start implements channels.Channel: it polls in the background until ctx
// ends or Stop is called.
func (c *Channel) Start(ctx context.Context, publish channels.Publish) error {
	nctx, cancel := c.callCtx(c.Receive(ctx, publish, "weixin polling", c.pollLoop))
	defer cancel()
	c.notify(nctx, epNotifyStart)
	return nil
}

// Stop implements channels.Channel: the poll ends, the cursor is kept.
func (c *Channel) Stop(ctx context.Context) error {
	err := c.Base.Stop(ctx)
	nctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c.notify(nctx, epNotifyStop)
	return err
}

// notify is nanobot's best-effort online-state call.
func (c *Channel) notify(ctx context.Context, endpoint string) {
	if err := c.client().post(ctx, endpoint, nil, nil); err != nil {
		c.Log.Debug("weixin notify failed (ignored)", "endpoint", endpoint, "error", err)
	}
}

func (c *Channel) client() *client {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.api
}

// callCtx bounds a call made on the channel's own behalf.
func (c *Channel) callCtx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, callTimeout)
}

// saveAccount persists the login, the cursor and the context tokens.
func (c *Channel) saveAccount() {
	c.saveMu.Lock()
	defer c.saveMu.Unlock()
	c.mu.Lock()
	a := c.acct
	a.ContextTokens = maps.Clone(c.acct.ContextTokens)
	c.mu.Unlock()
	if disk, err := loadAccount(c.dir); err == nil && disk.Token != "" && disk.Token != a.Token {
		return // a login since we started stored a newer token: never overwrite it
	}
	if err := saveAccount(c.dir, a); err != nil {
		c.Log.Warn("weixin state not saved: a restart will poll from an older cursor", "error", err)
	}
}
