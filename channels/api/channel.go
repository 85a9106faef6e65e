// Package api is nanobot's OpenAI-compatible HTTP API as a channel:
// POST /v1/chat/completions (plain or streamed), GET /v1/models and
// GET /health. Each request publishes one message into the session
// api:<session_id> and waits, in this process, for the turn's reply.
package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/internal/hostcheck"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Name is the channel's name, in routes and session keys (api:<id>).
const Name = "api"

// defaultChat is the chat (and session api:default) of requests without session_id.
const defaultChat = "default"

// senderID is who API messages come from: the API key is the gate, not the sender.
const senderID = "api"

// defaultTimeout is api.timeout when unset (seconds).
const defaultTimeout = 120

// Channel serves the API. Its replies come through this process's own
// delivery queue: the HTTP request waiting for one lives here.
type Channel struct {
	endpoint  *channels.Endpoint
	apiKey    string
	timeout   float64 // seconds, as configured
	model     string
	queue     string
	workspace string
	log       *slog.Logger

	waiters *waiters
	publish channels.Publish // set in Start, before the endpoint serves
}

// New builds the API channel from the config's api block.
func New(deps channels.Deps) (*Channel, error) {
	if deps.Config == nil {
		return nil, errors.New("api: no config")
	}
	if deps.ProcessQueue == "" {
		return nil, errors.New("api: this process has no delivery queue for the replies")
	}
	cfg := deps.Config.API
	host := cfg.Host
	if host == "" {
		host = "127.0.0.1"
	}
	if cfg.Port < 0 || cfg.Port > 65535 {
		return nil, fmt.Errorf("api.port %d is not a TCP port", cfg.Port)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	model := deps.Config.ActiveModel().Model
	if model == "" {
		model = "nanobot"
	}
	log := deps.Log
	if log == nil {
		log = slog.Default()
	}
	if !hostcheck.Loopback(host) && cfg.APIKey == "" {
		return nil, channels.Unsafe(fmt.Errorf("api.host %s reaches beyond this machine and api.apiKey is not set, so anyone who reaches it could drive the agent: set api.apiKey (or host 127.0.0.1) in %s", host, deps.Config.Path))
	}
	return &Channel{
		endpoint: channels.NewEndpoint("API server", host, cfg.Port, channels.Hosts{Allowed: cfg.AllowedHosts, Setting: "api.allowedHosts"}),
		apiKey:   cfg.APIKey, timeout: timeout, model: model,
		queue: deps.ProcessQueue, workspace: deps.Workspace, log: log.With("channel", Name),
		waiters: newWaiters(),
	}, nil
}

// Name implements channels.Channel.
func (c *Channel) Name() string { return Name }

// Describe tells the banner where the API listens.
func (c *Channel) Describe() string {
	url := "http://" + c.endpoint.Addr() + "/v1"
	if c.apiKey != "" {
		return url + " (bearer key required)"
	}
	return url
}

// Start implements channels.Channel: it listens, then serves in the background.
func (c *Channel) Start(_ context.Context, publish channels.Publish) error {
	c.publish = publish // set before the server's goroutine starts, so every request sees it
	return c.endpoint.Listen(c, c.log)
}

// Stop implements channels.Channel: waiting requests are answered 503
// (their turns go on; the replies stay in the journal), then the server closes.
func (c *Channel) Stop(ctx context.Context) error {
	c.waiters.close(serverError(http.StatusServiceUnavailable, "The server is shutting down"))
	return c.endpoint.Shutdown(ctx)
}

// Send implements channels.Channel: it hands a reply to the requests it
// answers. A reply names the messages it answers; one that names none (a
// message tool send, a /stop) answers the request that was publishing it
// or else the oldest request of its chat. A reply nobody waits for any
// more (the client left, or timed out) is dropped: it is in the journal.
func (c *Channel) Send(ctx context.Context, r channels.Reply) error {
	text := r.Text
	if strings.TrimSpace(text) == "" {
		text = protocol.EmptyFinalText
	}
	if len(r.MessageIDs) > 0 {
		if c.waiters.answer(r.MessageIDs, text) == 0 {
			c.log.Info("reply for requests no longer waiting", "chat", r.Route.ChatID, "messages", r.MessageIDs)
		}
		return nil
	}
	if w, ok := ctx.Value(publishingKey{}).(*waiter); ok {
		c.waiters.answerOne(w, text)
		return nil
	}
	turn, _, _ := strings.Cut(r.Turn, "/") // a message tool send is "<turn>/<call id>"
	if !c.waiters.answerOldest(r.Route.ChatID, turn, text) {
		c.log.Info("message for a chat with no request answered by it", "chat", r.Route.ChatID, "kind", r.Kind)
	}
	return nil
}

// SendDelta implements channels.Streamer: the chat's running turn streams
// to the request it answers, if that request asked for a stream.
func (c *Channel) SendDelta(_ context.Context, ev channels.StreamEvent) {
	if ev.Route.Queue != c.queue {
		return // a request waiting in another process
	}
	switch {
	case ev.Reset:
		c.waiters.streamTo(ev.Route.ChatID, func(s *streamText) string { s.Reset(ev.Turn, ev.Iteration); return "" })
	case ev.Delta != "":
		c.waiters.streamTo(ev.Route.ChatID, func(s *streamText) string { return s.Delta(ev.Turn, ev.Iteration, ev.Delta) })
	}
}

// publishingKey marks the context of a request publishing its message, so
// a reply given while it publishes (a /stop's) reaches it.
type publishingKey struct{}

func newID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

var _ channels.Streamer = (*Channel)(nil)
