package channels

import (
	"context"
	"fmt"
	"sync"
)

// Reply is a finished answer on its way to a chat.
type Reply struct {
	SessionKey string
	ChatID     string
	Turn       string
	MessageIDs []string
	Text       string
	StopReason string
}

// Channel is a chat connection owned by this process.
type Channel interface {
	Name() string
	// Send shows a reply in the chat. It must be safe to call again with the
	// same reply (delivery is retried).
	Send(ctx context.Context, r Reply) error
}

// Manager knows the channels this process owns.
type Manager struct {
	mu       sync.RWMutex
	channels map[string]Channel
}

// NewManager returns a manager with no channels.
func NewManager() *Manager { return &Manager{channels: map[string]Channel{}} }

// Add registers a channel under its name.
func (m *Manager) Add(c Channel) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.channels[c.Name()] = c
}

// Send routes a reply to its channel.
func (m *Manager) Send(ctx context.Context, channel string, r Reply) error {
	m.mu.RLock()
	c, ok := m.channels[channel]
	m.mu.RUnlock()
	if !ok {
		return fmt.Errorf("channel %q is not connected in this process", channel)
	}
	return c.Send(ctx, r)
}
