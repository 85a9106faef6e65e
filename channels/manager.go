package channels

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/owner"
	"github.com/nanobot-durable/nanobot/pairing"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Manager runs the channels this process owns: it starts and stops them,
// admits what they receive once (allowFrom, then pairing, then the session
// key) before any workflow is touched, shows typing and acknowledgements
// while a turn runs, and routes deliveries and stream events to them.
type Manager struct {
	// Bus publishes admitted messages to their session's turn.
	Bus Intake
	// Config holds each channel's allow list (see Spec.AllowFrom).
	Config *config.Config
	// Pairing lets unknown senders in by an approved code; nil = allowFrom only.
	Pairing *pairing.Store
	// Unified maps every chat without a channel's scope to one session
	// (agents.defaults.unifiedSession; see sessionKey).
	Unified bool
	// Owner seals every admitted message: only a sealed message answers an
	// approval (the zero key seals nothing).
	Owner owner.Key
	Log   *slog.Logger
	// Restart, when set (the gateway), answers /restart: it is called with
	// the chat that asked, once "Restarting..." was sent there.
	Restart func(from protocol.Route)

	mu         sync.RWMutex
	channels   map[string]Channel
	started    []Channel
	stopHub    func()
	indicators indicators
	edits      editStreams
	lastEvent  map[string]time.Time
}

// Intake takes admitted messages to the agent (the Bus); for a /stop it
// returns the reply to show.
type Intake interface {
	Publish(ctx context.Context, msg protocol.Inbound) (string, error)
}

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
	m.edits.log = m.log()
	m.edits.hints = m.Config != nil && m.Config.Channels.SendToolHints
	m.edits.progress = m.Config == nil || m.Config.Channels.SendProgress
	if hub != nil {
		m.stopHub = hub.SubscribeAll(func(ev StreamEvent) { m.stream(ctx, ev) })
		hub.OnDrawn(m.edits.drawn)
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
	m.indicators.stopAll()
}

// stream hands an event to the channel that owns its chat: one that draws
// streams itself, or one the manager streams to by editing a message.
func (m *Manager) stream(ctx context.Context, ev StreamEvent) {
	c, ok := m.Get(ev.Route.Channel)
	if !ok {
		return
	}
	switch s := c.(type) {
	case Streamer:
		s.SendDelta(ctx, ev)
	case Editor:
		m.edits.event(ctx, s, ev)
	}
}

// Send routes a reply to the channel its route names. Anything but a
// message tool send ends the chat's typing and acknowledgement.
func (m *Manager) Send(ctx context.Context, r Reply) error {
	c, ok := m.Get(r.Route.Channel)
	if !ok {
		return fmt.Errorf("channel %q is not connected in this process", r.Route.Channel)
	}
	if r.Kind != protocol.ReplyMessage {
		m.indicators.stop(ctx, c, r.Route, m.log())
	}
	var streamed func() (string, string)
	if _, ok := c.(Editor); ok && r.Answer() && r.Turn != "" {
		streamed = func() (string, string) {
			if id, shown := m.edits.take(r.Route, r.Turn); id != "" {
				return id, shown
			}
			return r.Drawn, "" // drawn by another gateway: edited to the answer
		}
	}
	return deliver(ctx, c, r, streamed)
}

// ErrRefused marks a message that access control kept out.
var ErrRefused = errors.New("sender not allowed")

// ErrHandled is what an Admitted hook returns when it answered the message
// itself (a /start greeting): nothing goes to the agent.
var ErrHandled = errors.New("message handled by the channel")

// Admitted is work a channel does only for a sender the manager let in —
// downloading files, a greeting — before the message goes to the agent.
// It may change the message; ErrHandled stops it there.
type Admitted func(ctx context.Context, msg *protocol.Inbound) error

// publisher is what a channel calls with each message it receives.
func (m *Manager) publisher(c Channel) Publish {
	return func(ctx context.Context, msg protocol.Inbound, admitted Admitted) error {
		return m.Admit(ctx, c, msg, admitted)
	}
}

// Admit is the one gate of every message: the channel's allowFrom, then
// the pairing store; an unknown sender in a direct message gets a pairing
// code, in a group it is ignored, and either way nothing reaches the model.
// An admitted message runs the channel's hook, gets its session key, the
// owner key's seal and the chat's indicators, and goes to the agent.
func (m *Manager) Admit(ctx context.Context, c Channel, msg protocol.Inbound, admitted Admitted) error {
	msg.Route.Channel = c.Name()
	m.noteEvent(c.Name())
	allowed, err := m.allowed(c.Name(), msg.Route.SenderID)
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
	if admitted != nil {
		if err := admitted(ctx, &msg); err != nil {
			return err
		}
	}
	msg.SessionKey = sessionKey(msg, m.Unified) // decided here only; the seal covers it
	m.Owner.Seal(&msg, owner.ByChat)            // this channel let this sender into this chat
	if m.Restart != nil && isCommand(msg.Content, "/restart") {
		// nanobot's priority command: answered here, not by a turn, which
		// goes on in Temporal and answers once the gateway is back.
		err := Deliver(ctx, c, Reply{Route: msg.Route, SessionKey: msg.SessionKey, Text: RestartingReply, Kind: protocol.ReplySystem})
		m.Restart(msg.Route)
		return err
	}
	// Indicators start before the message is handed over, so even a reply
	// that comes back at once (a command) finds them to stop.
	waits := !isStop(msg.Content)
	if waits {
		m.indicators.start(ctx, c, msg, m.log())
	}
	stopReply, err := m.Bus.Publish(ctx, msg)
	if err != nil {
		if waits {
			m.indicators.stop(ctx, c, msg.Route, m.log())
		}
		return err
	}
	if stopReply != "" {
		return Deliver(ctx, c, Reply{Route: msg.Route, SessionKey: msg.SessionKey, Text: stopReply, Kind: protocol.ReplySystem})
	}
	return nil
}

func (m *Manager) allowed(channel, sender string) (bool, error) {
	return Allowed(m.Config, m.Pairing, channel, sender)
}

// Allowed is the one access rule: the channel's allow list, then senders
// approved by pairing (store may be nil: allowFrom only). The manager
// applies it to every message; a channel asks it only for a decision taken
// before any message (Matrix: whether to join on an invite).
func Allowed(cfg *config.Config, store *pairing.Store, channel, sender string) (bool, error) {
	if AllowFromFor(cfg, channel).Allows(sender) {
		return true, nil
	}
	if store == nil || sender == "" {
		return false, nil
	}
	ok, err := store.IsApproved(channel, sender)
	if err != nil {
		return false, fmt.Errorf("check pairing of %s:%s: %w", channel, sender, err)
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
	if err := m.Send(ctx, Reply{Route: msg.Route, Text: PairingText(code), Kind: protocol.ReplySystem}); err != nil {
		return fmt.Errorf("send pairing code: %w", err)
	}
	return ErrRefused
}
