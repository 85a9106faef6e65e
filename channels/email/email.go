// Package email is the Email channel: mail read from an IMAP mailbox
// (IDLE when the server offers it, polling otherwise), one session per
// sender, replies sent by SMTP threaded under the mail they answer.
package email

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// Name is the channel's name in routes, session keys and config.
const Name = "email"

// MaxLength is far above any reply: one reply is one mail.
const MaxLength = 100_000

// Timing of the connections.
const (
	// callTimeout bounds one IMAP command or one SMTP conversation.
	callTimeout = 60 * time.Second
	// idleRefresh re-checks the mailbox while idling, in case a
	// notification was lost; servers drop IDLE after 30 minutes.
	idleRefresh = 10 * time.Minute
	// maxBackoff caps the wait between reconnection attempts.
	maxBackoff = time.Minute
	// handledKeys is how many handled mails are remembered across restarts.
	handledKeys = 8192
)

// Channel is one mailbox: IMAP in, SMTP out.
type Channel struct {
	channels.Base
	cfg       Config
	workspace string
	self      map[string]bool

	mu        sync.Mutex
	connected bool
	idle      bool // the server offered IDLE on the last connection
}

// New builds the channel from the gateway's config; it connects in Start.
func New(deps channels.Deps) (*Channel, error) {
	if deps.Config == nil {
		return nil, errors.New("email: no config")
	}
	cfg, err := load(deps.Config)
	if err != nil {
		return nil, err
	}
	if keys := cfg.missing(); len(keys) > 0 {
		return nil, fmt.Errorf("email: %v not set: the channel is not started", keys)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c := &Channel{
		cfg: cfg, workspace: deps.Workspace, self: cfg.selfAddresses(),
	}
	file := ""
	if deps.Config.Path != "" {
		file = filepath.Join(config.ConfigDir(deps.Config.Path), "channels", "email-handled.json")
	}
	// Message-IDs (or mailbox UIDs) taken in.
	c.Init(Name, deps.Logger(Name), deps.SeenSet("email-handled", handledKeys, file))
	if !cfg.VerifyDKIM && !cfg.VerifySPF {
		c.Log.Warn("email: verifyDkim and verifySpf are both off: mail with a forged From is taken as its sender's")
	}
	return c, nil
}

// Describe tells the gateway banner which mailbox this is.
func (c *Channel) Describe() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	mode := fmt.Sprintf("polling every %s", c.cfg.pollInterval())
	if c.idle {
		mode = "IDLE"
	}
	if !c.connected {
		mode = "connecting"
	}
	return fmt.Sprintf("%s on %s:%d/%s (%s), replies from %s", c.cfg.IMAPUsername, c.cfg.IMAPHost, c.cfg.IMAPPort, c.cfg.mailbox(), mode, c.cfg.from())
}

// Start implements channels.Channel: it logs in once (a wrong password
// fails the start), then reads the mailbox until ctx ends or Stop is called.
func (c *Channel) Start(ctx context.Context, publish channels.Publish) error {
	first, err := c.connect(ctx)
	if err != nil {
		return fmt.Errorf("email: %w", err)
	}
	c.Receive(ctx, publish, "email receive loop", func(ctx context.Context) { c.receive(ctx, first) })
	c.Log.Info("email mailbox connected", "mailbox", c.cfg.mailbox(), "imap", fmt.Sprintf("%s:%d", c.cfg.IMAPHost, c.cfg.IMAPPort), "idle", first.idle)
	return nil
}

// Connected implements channels.Connector: logged in to the mailbox.
func (c *Channel) Connected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.connected
}

func (c *Channel) setState(connected, idle bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.connected, c.idle = connected, idle
}
