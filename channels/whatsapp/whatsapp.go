// Package whatsapp is the WhatsApp channel: a linked device (whatsmeow,
// its session in a SQLite store under the nanobot home) taking DMs, and
// group messages as nanobot's groupPolicy allows, and answering with
// replies that quote the user's message, images and files, and "typing…".
package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/nanobot-durable/nanobot/channels"
)

// Name is the channel's name in config, routes and session keys.
const Name = "whatsapp"

// callTimeout bounds one call made on the channel's own behalf.
const callTimeout = 30 * time.Second

// loginHint is what a channel without a device tells the user to do.
const loginHint = "run `nanobot channels login whatsapp` to pair this device"

// state is where the channel is: down states say why in the banner.
type state int32

const (
	stateStarting state = iota
	stateConnecting
	stateConnected
	stateDisconnected
	stateNotPaired
	stateLoggedOut
)

// Channel is one WhatsApp linked device.
type Channel struct {
	channels.Base
	cfg       Config
	workspace string
	storePath string
	open      openClient
	quotes    *quoteCache
	lids      *lidMap

	state atomic.Int32

	mu      sync.Mutex
	client  waClient
	self    types.JID
	selfLID types.JID
}

// New builds the channel from config; it connects in Start.
func New(deps channels.Deps) (*Channel, error) {
	cfg, err := readConfig(deps.Config)
	if err != nil {
		return nil, err
	}
	log := deps.Logger(Name)
	for _, key := range cfg.bridgeKeys() {
		log.Warn("channels.whatsapp."+key+" is ignored: "+bridgeWarning, "key", key)
	}
	c := &Channel{
		cfg: cfg, workspace: deps.Workspace, storePath: cfg.storePath(deps.Home),
		open: openWhatsmeow, quotes: newQuoteCache(1024), lids: newLIDMap(cfg.LIDMappings),
	}
	c.Init(Name, log, deps.SeenSet("whatsapp-seen", 4096, deps.StateFile("whatsapp-seen.json")))
	return c, nil
}

// Connected implements channels.Connector: whatsmeow's socket is up and
// logged in (its own states, not Base's: they name why it is down).
func (c *Channel) Connected() bool { return state(c.state.Load()) == stateConnected }

// Describe tells the gateway banner which account this is, or why it is down.
func (c *Channel) Describe() string {
	switch state(c.state.Load()) {
	case stateNotPaired:
		return "not paired (" + c.storePath + "): " + loginHint
	case stateLoggedOut:
		return "logged out by the phone: " + loginHint
	}
	c.mu.Lock()
	self := c.self
	c.mu.Unlock()
	if self.IsEmpty() {
		return "device in " + c.storePath + ", groupPolicy " + c.cfg.GroupPolicy
	}
	return fmt.Sprintf("+%s (linked device), groupPolicy %s", self.User, c.cfg.GroupPolicy)
}

// Start opens the device store and connects in the background. No paired
// device is not an error of the gateway: the channel says how to pair and
// stays down, and the other channels run.
func (c *Channel) Start(ctx context.Context, publish channels.Publish) error {
	client, err := c.open(ctx, c.storePath, c.Log)
	if err != nil {
		return fmt.Errorf("whatsapp: %w", err)
	}
	if !client.Paired() {
		_ = client.Close()
		c.state.Store(int32(stateNotPaired))
		c.Log.Error("whatsapp channel not started: "+errNotPaired.Error(), "store", c.storePath)
		return nil
	}
	pn, lid := client.Self()
	c.mu.Lock()
	c.client, c.self, c.selfLID = client, userJID(pn), userJID(lid)
	c.mu.Unlock()
	c.state.Store(int32(stateConnecting))
	c.Receive(ctx, publish, "whatsapp event loop", func(ctx context.Context) { c.run(ctx, client) })
	return nil
}

// run connects (retrying with backoff until whatsmeow has a connection to
// keep: it reconnects by itself from then on) and handles events in order.
func (c *Channel) run(ctx context.Context, client waClient) {
	defer client.Close()
	go c.connect(ctx, client)
	for {
		select {
		case <-ctx.Done():
			client.Disconnect()
			return
		case evt, ok := <-client.Events():
			if !ok {
				return
			}
			if !c.onEvent(ctx, client, evt) {
				client.Disconnect()
				return
			}
		}
	}
}

// connect calls Connect until it succeeds (whatsmeow keeps the
// connection from then on), the device is logged out, or ctx ends.
func (c *Channel) connect(ctx context.Context, client waClient) {
	c.Reconnect(ctx, channels.Backoff{}, func(ctx context.Context) error {
		err := client.Connect(ctx)
		switch {
		case err == nil:
			<-ctx.Done()
			return ctx.Err()
		case state(c.state.Load()) == stateLoggedOut:
			return channels.Fatal(fmt.Errorf("whatsapp device logged out: %w", err))
		}
		return fmt.Errorf("whatsapp connect failed: %w", err)
	})
}

// onEvent handles one whatsmeow event; false ends the channel (logged out).
func (c *Channel) onEvent(ctx context.Context, client waClient, evt any) bool {
	switch e := evt.(type) {
	case *events.Connected:
		pn, lid := client.Self()
		c.mu.Lock()
		c.self, c.selfLID = userJID(pn), userJID(lid)
		c.mu.Unlock()
		c.state.Store(int32(stateConnected))
		c.Log.Info("whatsapp connected", "jid", pn.String(), "lid", lid.String())
	case *events.Disconnected:
		c.state.Store(int32(stateDisconnected))
		c.Log.Warn("whatsapp disconnected; whatsmeow reconnects")
	case *events.LoggedOut:
		c.state.Store(int32(stateLoggedOut))
		c.Log.Error("whatsapp device logged out (removed from the phone's linked devices, or expired): the channel stays down; "+loginHint,
			"on_connect", e.OnConnect, "reason", e.Reason.String())
		return false
	case *events.StreamReplaced:
		c.state.Store(int32(stateDisconnected))
		c.Log.Error("whatsapp session taken over by another client with the same device (two gateways on one store?)")
	case *events.TemporaryBan:
		c.Log.Error("whatsapp account temporarily banned", "ban", e.String())
	case *events.Message:
		c.handle(ctx, client, e)
	default:
		c.Log.Debug("whatsapp event ignored", "type", fmt.Sprintf("%T", evt))
	}
	return true
}

// Stop implements channels.Channel: the event loop ends, the store closes.
func (c *Channel) Stop(ctx context.Context) error {
	err := c.Base.Stop(ctx)
	if st := state(c.state.Load()); st != stateNotPaired && st != stateLoggedOut {
		c.state.Store(int32(stateDisconnected))
	}
	return err
}

// current is the running client, nil while the channel is down.
func (c *Channel) current() (waClient, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch st := state(c.state.Load()); {
	case c.client == nil || st == stateNotPaired:
		return nil, errNotPaired
	case st == stateLoggedOut:
		return nil, errors.New("whatsapp device logged out: " + loginHint)
	}
	return c.client, nil
}

func (c *Channel) me() (types.JID, types.JID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.self, c.selfLID
}
