// Package signal is the Signal channel, through signal-cli's HTTP daemon
// as nanobot has it: received messages from the daemon's Server-Sent
// Events stream (GET /api/v1/events, resumed by Last-Event-ID), replies,
// files and typing through its JSON-RPC endpoint (POST /api/v1/rpc).
// Direct messages and groups follow nanobot's dm and group policies.
package signal

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
)

// Name is the channel's name in config, routes and session keys.
const Name = "signal"

// callTimeout bounds one JSON-RPC call.
const callTimeout = 60 * time.Second

// Channel is one signal-cli account, served by its daemon.
type Channel struct {
	channels.Base
	cfg       Config
	workspace string
	rpc       *channels.JSONRPC // POST /api/v1/rpc
	events    *http.Client      // the stream: no overall timeout, a read watchdog instead
	groups    *channels.ChatHistory
	self      *accountIDs
	cursor    channels.Cursor // the last event handed over
}

// New builds the channel from config; it connects in Start.
func New(deps channels.Deps) (*Channel, error) {
	cfg, err := channels.StartBlock(deps.Config, Name, defaults)
	if err != nil {
		return nil, err
	}
	if cfg.AttachmentsDir == "" {
		home, _ := os.UserHomeDir()
		cfg.AttachmentsDir = filepath.Join(home, ".local", "share", "signal-cli", "attachments")
	}
	c := &Channel{
		cfg: cfg, workspace: deps.Workspace,
		rpc:    &channels.JSONRPC{API: &channels.API{Name: "signal-cli", Base: cfg.daemonURL(), HTTP: &http.Client{Timeout: callTimeout}}, Path: "/api/v1/rpc"},
		events: &http.Client{},
		groups: channels.NewChatHistory(cfg.GroupMessageBufferSize),
		self:   newAccountIDs(cfg.PhoneNumber),
	}
	c.Init(Name, deps.Logger(Name), deps.SeenSet("signal-messages", 4096, deps.StateFile("signal-seen.json")))
	c.cursor = channels.Cursor{State: deps.ChannelState(Name, deps.StateFile("signal-state.json")), Key: "lastEventId", Log: c.Log}
	return c, nil
}

// Describe tells the gateway banner which account this is.
func (c *Channel) Describe() string {
	return fmt.Sprintf("%s via signal-cli at %s (dm: %s, groups: %s)", c.cfg.PhoneNumber, c.cfg.daemonURL(),
		shownPolicy(c.cfg.DM.Enabled, c.cfg.DM.Policy), shownPolicy(c.cfg.Group.Enabled, c.cfg.Group.Policy))
}

// shownPolicy is a policy as the banner shows it: "off" when disabled.
func shownPolicy(enabled bool, policy string) string {
	if !enabled {
		return "off"
	}
	return policy
}

// Start subscribes to the daemon's events in the background; a daemon not
// running yet is retried (1 s doubling to 30 s, as in nanobot).
func (c *Channel) Start(ctx context.Context, publish channels.Publish) error {
	c.Serve(ctx, publish, "signal event stream", channels.Backoff{Max: 30 * time.Second}, c.stream)
	return nil
}
