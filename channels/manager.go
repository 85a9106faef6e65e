package channels

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"

	"github.com/nanobot-durable/nanobot/pairing"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Manager runs the channels this process owns: it starts and stops them,
// gates what they receive (allowFrom, then pairing) before any workflow is
// touched, routes deliveries and stream events to them.
type Manager struct {
	// Bus publishes admitted messages to their session's turn.
	Bus Intake
	// Pairing lets unknown senders in by an approved code; nil = allowFrom only.
	Pairing *pairing.Store
	// Unified maps every channel to one session (agents.defaults.unifiedSession).
	Unified bool
	Log     *slog.Logger

	mu       sync.RWMutex
	channels map[string]Channel
	started  []Channel
	stopHub  func()
}

// Intake takes admitted messages to the agent (the Bus); for a /stop it
// returns the reply to show.
type Intake interface {
	Publish(ctx context.Context, msg protocol.Inbound) (string, error)
}

// UnifiedSessionKey is the one session of unifiedSession mode.
const UnifiedSessionKey = "unified:default"

// NewManager returns a manager with no channels.
func NewManager() *Manager { return &Manager{channels: map[string]Channel{}} }

func (m *Manager) log() *slog.Logger {
	if m.Log == nil {
		return slog.Default()
	}
	return m.Log
}

// Add registers a channel under its name.
func (m *Manager) Add(c Channel) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.channels[c.Name()] = c
}

// Get returns the channel of that name, if this process owns it.
func (m *Manager) Get(name string) (Channel, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	c, ok := m.channels[name]
	return c, ok
}

// Names lists the channels this process owns, sorted.
func (m *Manager) Names() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	names := make([]string, 0, len(m.channels))
	for n := range m.channels {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Start starts every channel and subscribes the streamers to hub. A channel
// that fails to start is reported and left out; the others run.
func (m *Manager) Start(ctx context.Context, hub *StreamHub) []error {
	var errs []error
	for _, name := range m.Names() {
		c, _ := m.Get(name)
		if err := c.Start(ctx, m.publisher(c)); err != nil {
			errs = append(errs, fmt.Errorf("channel %s: %w", name, err))
			m.mu.Lock()
			delete(m.channels, name)
			m.mu.Unlock()
			continue
		}
		m.started = append(m.started, c)
	}
	if hub != nil {
		m.stopHub = hub.SubscribeAll(func(ev StreamEvent) { m.stream(ctx, ev) })
	}
	return errs
}

// Stop stops the started channels, last started first.
func (m *Manager) Stop(ctx context.Context) {
	if m.stopHub != nil {
		m.stopHub()
	}
	for i := len(m.started) - 1; i >= 0; i-- {
		if err := m.started[i].Stop(ctx); err != nil {
			m.log().Warn("channel did not stop cleanly", "channel", m.started[i].Name(), "error", err)
		}
	}
	m.started = nil
}

// stream hands an event to the channel that owns its chat, if it draws streams.
func (m *Manager) stream(ctx context.Context, ev StreamEvent) {
	c, ok := m.Get(ev.Route.Channel)
	if !ok {
		return
	}
	if s, ok := c.(Streamer); ok {
		s.SendDelta(ctx, ev)
	}
}

// Send routes a reply to the channel its route names.
func (m *Manager) Send(ctx context.Context, r Reply) error {
	c, ok := m.Get(r.Route.Channel)
	if !ok {
		return fmt.Errorf("channel %q is not connected in this process", r.Route.Channel)
	}
	return c.Send(ctx, r)
}

// ErrRefused marks a message that access control kept out.
var ErrRefused = errors.New("sender not allowed")

// publisher is what a channel calls with each message it receives.
func (m *Manager) publisher(c Channel) Publish {
	return func(ctx context.Context, msg protocol.Inbound) error {
		return m.Admit(ctx, c, msg)
	}
}

// Admit checks a message against the channel's allowFrom and the pairing
// store, then publishes it. An unknown sender in a direct message gets a
// pairing code; in a group it is ignored. Either way nothing reaches the model.
func (m *Manager) Admit(ctx context.Context, c Channel, msg protocol.Inbound) error {
	msg.Route.Channel = c.Name()
	allowed, err := m.allowed(c, msg.Route.SenderID)
	if err != nil {
		return err
	}
	if !allowed {
		m.log().Warn("message refused: sender not allowed", "channel", c.Name(), "sender", msg.Route.SenderID,
			"chat", msg.Route.ChatID, "group", msg.Group)
		if !msg.Group && m.Pairing != nil {
			return m.offerPairing(ctx, c, msg)
		}
		return ErrRefused
	}
	if msg.SessionKey == "" {
		msg.SessionKey = protocol.SessionKey(msg.Route.Channel, msg.Route.ChatID)
		if m.Unified {
			msg.SessionKey = UnifiedSessionKey
		}
	}
	stopReply, err := m.Bus.Publish(ctx, msg)
	if err != nil {
		return err
	}
	if stopReply != "" {
		return c.Send(ctx, Reply{Route: msg.Route, SessionKey: msg.SessionKey, Text: stopReply, Kind: protocol.ReplySystem})
	}
	return nil
}

func (m *Manager) allowed(c Channel, sender string) (bool, error) {
	if c.IsAllowed(sender) {
		return true, nil
	}
	if m.Pairing == nil || sender == "" {
		return false, nil
	}
	ok, err := m.Pairing.IsApproved(c.Name(), sender)
	if err != nil {
		return false, fmt.Errorf("check pairing of %s:%s: %w", c.Name(), sender, err)
	}
	return ok, nil
}

func (m *Manager) offerPairing(ctx context.Context, c Channel, msg protocol.Inbound) error {
	code, fresh, err := m.Pairing.Request(c.Name(), msg.Route.SenderID, msg.Route.ChatID)
	if err != nil {
		return fmt.Errorf("pairing request of %s:%s: %w", c.Name(), msg.Route.SenderID, err)
	}
	if !fresh {
		return ErrRefused // the code already given is still valid: one code, not one per message
	}
	m.log().Info("pairing code issued", "channel", c.Name(), "sender", msg.Route.SenderID)
	if err := c.Send(ctx, Reply{Route: msg.Route, Text: PairingText(code), Kind: protocol.ReplySystem}); err != nil {
		return fmt.Errorf("send pairing code: %w", err)
	}
	return ErrRefused
}
