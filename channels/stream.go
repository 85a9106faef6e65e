// Package channels holds the chat channels (CLI, and in subpackages
// Telegram, Slack and the OpenAI-compatible API), the manager that runs
// them, access control, the in-process stream hub that model and tool
// activities publish to, and the bus that hands inbound messages to turns.
package channels

import (
	"sync"

	"github.com/nanobot-durable/nanobot/protocol"
)

// StreamEvent is one piece of a reply being generated.
type StreamEvent struct {
	SessionKey string
	Route      protocol.Route
	Turn       string
	Iteration  int
	Delta      string
	Reasoning  string
	// ToolHint is a progress line for a tool about to run ("read_file README.md").
	ToolHint string
	// Reset tells the channel to drop what it drew for this iteration (a retried attempt).
	Reset bool
	// End marks the end of one model call's stream.
	End bool
	// Injected names messages that joined the running turn (a mid-turn injection).
	Injected []string
}

// StreamHub fans stream events out to subscribers inside this process.
// Events nobody watches here are dropped: the reply still arrives through
// delivery.
type StreamHub struct {
	mu   sync.Mutex
	next int
	subs map[string]map[int]func(StreamEvent) // by session key; "" = every event
	// drawn asks this process's painter which message shows a model call's text.
	drawn func(route protocol.Route, turn string, iteration int) string
}

// NewStreamHub returns an empty hub.
func NewStreamHub() *StreamHub { return &StreamHub{subs: map[string]map[int]func(StreamEvent){}} }

// Subscribe calls fn for each event of one session until cancel is called.
// fn runs synchronously in the publisher, so a reply delivered after the
// model call finds every delta already drawn; it must be quick.
func (h *StreamHub) Subscribe(sessionKey string, fn func(StreamEvent)) (cancel func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	id := h.next
	if h.subs[sessionKey] == nil {
		h.subs[sessionKey] = map[int]func(StreamEvent){}
	}
	h.subs[sessionKey][id] = fn
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs[sessionKey], id)
		if len(h.subs[sessionKey]) == 0 {
			delete(h.subs, sessionKey)
		}
	}
}

// SubscribeAll calls fn for every event, whatever its session.
func (h *StreamHub) SubscribeAll(fn func(StreamEvent)) (cancel func()) { return h.Subscribe("", fn) }

// Publish hands an event to the session's subscribers and to those of every event.
func (h *StreamHub) Publish(ev StreamEvent) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, fn := range h.subs[ev.SessionKey] {
		fn(ev)
	}
	if ev.SessionKey != "" {
		for _, fn := range h.subs[""] {
			fn(ev)
		}
	}
}

// OnDrawn lets the process's painter answer Drawn.
func (h *StreamHub) OnDrawn(fn func(route protocol.Route, turn string, iteration int) string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.drawn = fn
}

// Drawn is the message this process drew one model call's streamed text
// into, once it shows all of it; "" if it drew none. The turn's answer
// carries it so that a gateway other than the drawer edits that message
// instead of posting the answer a second time.
func (h *StreamHub) Drawn(route protocol.Route, turn string, iteration int) string {
	if h == nil {
		return ""
	}
	h.mu.Lock()
	fn := h.drawn
	h.mu.Unlock()
	if fn == nil {
		return ""
	}
	return fn(route, turn, iteration)
}
