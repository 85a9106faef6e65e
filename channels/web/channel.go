// Package web is the chat page the gateway serves: one embedded page at /,
// JSON endpoints for input and history, and Server-Sent Events for the
// reply as it streams. Conversations are the sessions web:<chat id>.
package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/hostcheck"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
)

// Name is the channel's name, in routes and session keys (web:<chat>).
const Name = "web"

// senderID is who page messages come from: the token is the gate, not the sender.
const senderID = "web"

// Channel serves the page. Its replies come through the channel's shared
// delivery queue, so a reply finished while no gateway ran reaches the
// next one; the page itself rebuilds a conversation from the journal.
type Channel struct {
	endpoint    *channels.Endpoint // its own listener, unless it mounts on the process's
	token       string
	sessionsDir string
	workspace   string               // voice notes are saved under <workspace>/media
	maxAudio    int64                // transcription.maxUploadMb, in bytes
	shared      session.Store        // the process's journal, when the gateway gives one
	listener    *channels.SharedHTTP // the process's listener, served on when it has the endpoint's address
	cfg         *config.Config       // the context meter's settings
	store       journal              // opened at Start
	log         *slog.Logger

	clients *clients
	// showReasoning draws the model's reasoning while it streams (channels.showReasoning).
	showReasoning bool

	mu      sync.Mutex
	publish channels.Publish
	mounted bool // serving on listener, not on the endpoint
	turns   Turns
	// scheduled lists and drives the agent's schedules (nil: not reaching Temporal).
	scheduled Automations
	uiURL     string
	ns        string
	// instance names the turns' workflow IDs (gateway.instance).
	instance protocol.Instance
}

// New builds the web channel from channels.web.
func New(deps channels.Deps) (*Channel, error) {
	if deps.Config == nil {
		return nil, errors.New("web: no config")
	}
	cfg, err := ReadConfig(deps.Config)
	if err != nil {
		return nil, err
	}
	host := cfg.Host
	if host == "" {
		host = "127.0.0.1"
	}
	if cfg.Port < 0 || cfg.Port > 65535 {
		return nil, fmt.Errorf("channels.web.port %d is not a TCP port", cfg.Port)
	}
	log := deps.Log
	if log == nil {
		log = slog.Default()
	}
	if !hostcheck.Loopback(host) && cfg.Token == "" {
		return nil, channels.Unsafe(fmt.Errorf("channels.web.host %s reaches beyond this machine and channels.web.token is not set, so anyone who reaches it could drive the agent: set channels.web.token (or host 127.0.0.1) in %s", host, deps.Config.Path))
	}
	maxAudioMB := deps.Config.Transcription.MaxUploadMB
	if maxAudioMB < 1 {
		maxAudioMB = config.Default().Transcription.MaxUploadMB // a config built in code, not loaded
	}
	return &Channel{
		endpoint: channels.NewEndpoint("web chat server", host, cfg.Port, channels.Hosts{Allowed: cfg.AllowedHosts, Setting: "channels.web.allowedHosts"}),
		token:    cfg.Token, log: log.With("channel", Name),
		workspace: deps.Workspace, maxAudio: int64(maxAudioMB) << 20,
		sessionsDir: session.SessionsDir(config.ConfigDir(deps.Config.Path), deps.Workspace), shared: deps.Sessions, listener: deps.Shared,
		clients:       newClients(),
		showReasoning: deps.Config.Channels.ShowReasoning, instance: deps.Config.Instance(), cfg: deps.Config,
	}, nil
}

// journal is what the page reads: sessions and their list.
type journal interface {
	session.Store
	session.Lister
}

// openJournal is the gateway's journal, or the home's files without one.
func (c *Channel) openJournal() (journal, error) {
	if c.shared != nil {
		j, ok := c.shared.(journal)
		if !ok {
			return nil, fmt.Errorf("open the sessions: %T cannot list sessions", c.shared)
		}
		return j, nil
	}
	store, err := session.NewJSONLStore(c.sessionsDir, c.log)
	if err != nil {
		return nil, fmt.Errorf("open the sessions: %w", err)
	}
	return store, nil
}

// Name implements channels.Channel.
func (c *Channel) Name() string { return Name }

// UseTemporal lets the page show where a running turn is and link each
// turn to the Temporal Web UI (uiURL "" = no links).
func (c *Channel) UseTemporal(t Turns, uiURL, namespace string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.turns, c.uiURL, c.ns = t, strings.TrimSuffix(uiURL, "/"), namespace
}

// URL is where the page is, with the token when one is set.
func (c *Channel) URL() string {
	url := "http://" + c.endpoint.Addr() + "/"
	if c.token != "" {
		return url + "?token=" + c.token
	}
	return url
}

// Describe tells the banner where the chat is.
func (c *Channel) Describe() string { return c.URL() }

// Start implements channels.Channel: it listens, then serves in the background.
func (c *Channel) Start(_ context.Context, publish channels.Publish) error {
	store, err := c.openJournal()
	if err != nil {
		return err
	}
	c.store = store
	c.mu.Lock()
	defer c.mu.Unlock()
	c.publish = publish                                              // set before the server's goroutine starts, so every request sees it
	if c.listener != nil && c.listener.Addr() == c.endpoint.Addr() { // gateway.port = channels.web.port: one listener
		c.listener.Mount(c) // the listener checks Host with the same channels.web.allowedHosts
		c.mounted = true
		return nil
	}
	return c.endpoint.Listen(c, c.log)
}

// Stop implements channels.Channel: open streams end (pages reconnect to
// the next gateway and reload from the journal), then the server closes.
func (c *Channel) Stop(ctx context.Context) error {
	c.clients.closeAll()
	c.mu.Lock()
	if c.mounted {
		c.listener.Mount(nil) // the listener is its owner's to close
		c.mounted = false
	}
	c.mu.Unlock()
	return c.endpoint.Shutdown(ctx)
}

// Send implements channels.Channel: the reply goes to every page open on
// its chat. A page that is closed finds it in the journal when it opens.
func (c *Channel) Send(_ context.Context, r channels.Reply) error {
	if r.ID != "" && !c.clients.firstDelivery(r.ID) {
		return nil // a retried delivery already shown
	}
	c.clients.broadcast(r.Route.ChatID, event{Name: "reply", Data: replyEvent{
		ID: r.ID, Turn: r.Turn, Text: r.Text, HTML: markdown.WebHTML(r.Text), MessageIDs: r.MessageIDs, Kind: string(r.Kind), Media: r.Media,
		StopReason: r.StopReason, Approval: viewOf(r.Approval),
	}})
	return nil
}

// SendDelta implements channels.Streamer: deltas, resets, tool hints and
// injections are drawn on the pages open on the chat, and the model's
// reasoning too with channels.showReasoning.
func (c *Channel) SendDelta(_ context.Context, ev channels.StreamEvent) {
	s := streamEvent{Turn: ev.Turn, Iteration: ev.Iteration}
	if ev.Reasoning != "" && c.showReasoning {
		c.clients.broadcast(ev.Route.ChatID, event{Name: "reasoning", Data: streamEvent{Turn: ev.Turn, Iteration: ev.Iteration, Text: ev.Reasoning}})
	}
	var name string
	switch {
	case ev.Reset:
		name = "reset"
	case len(ev.Injected) > 0:
		name, s.IDs = "injected", ev.Injected
	case ev.ToolHint != "":
		name, s.Text = "hint", ev.ToolHint
	case ev.End:
		name = "end"
	case ev.Delta != "":
		name, s.Text = "delta", ev.Delta
	default:
		return // reasoning alone: drawn above, or not at all
	}
	c.clients.broadcast(ev.Route.ChatID, event{Name: name, Data: s})
}

func newID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

var _ channels.Streamer = (*Channel)(nil)
