// Package discordpeer is a fake Discord for tests, at the wire: the REST
// endpoints discordgo calls (users/@me, gateway/bot, channels, messages as
// JSON or multipart with files, edits, typing, reactions) and a gateway
// WebSocket speaking Discord's protocol — HELLO, IDENTIFY → READY and
// GUILD_CREATE, heartbeats and their ACKs, dispatches with sequence
// numbers, close codes and op 7 that make the bot RESUME, and the replay
// of what it missed. It records what the bot did, can hold a request
// unanswered, and can answer with errors (a 429 with retry_after).
package discordpeer

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/nanobot-durable/nanobot/channels/peerkit"
)

// The bot the peer knows.
const (
	Token   = "peer-bot-token"
	BotID   = "1100000000000000001"
	BotName = "nanobot-peer"
)

// Channel types (Discord's documentation, "Channel Types").
const (
	TypeGuildText    = 0
	TypeDM           = 1
	TypePublicThread = 11
)

// Message is a message the bot posted, as it shows now.
type Message struct {
	ID        string
	ChannelID string
	Content   string
	// ReplyTo is the message_reference's message id ("" if none).
	ReplyTo string
	Files   []File
	// Components are its message components as JSON ("" when none).
	Components string
	// Edits counts the PATCHes it got.
	Edits int
}

// File is an uploaded attachment.
type File struct {
	Name        string
	ContentType string
	Data        []byte
}

// Call is one REST request the bot made.
type Call = peerkit.Call

// Stats count the gateway's traffic.
type Stats struct {
	Connections          int
	ResumeURLConnections int
	Identifies           int
	Resumes              int
	InvalidSessions      int
	Heartbeats           int
}

type channel struct {
	id, guildID, parentID, name string
	kind                        int
}

// Peer is a running fake Discord.
type Peer struct {
	peerkit.Recorder // the REST calls the bot made
	*peerkit.Gateway // the bot's WebSocket: dispatch, close, forget the session, op 7
	t                testing.TB
	srv              *httptest.Server
	failures         peerkit.Failures
	files            peerkit.Files // attachments the users sent

	mu        sync.Mutex
	heartbeat time.Duration
	intents   int
	stats     Stats
	nextID    int64
	channels  map[string]*channel
	messages  []*Message // posted, in order
	responses []InteractionResponse
	holdAt    int    // the POST .../messages to hold (1-based), 0 = none
	posts     int    // POST .../messages seen
	holdEmoji string // the reaction PUT to hold, "" = none
	held      chan struct{}
	release   chan struct{}
}

// New starts the peer on 127.0.0.1; it stops when the test ends.
func New(t testing.TB) *Peer {
	t.Helper()
	p := &Peer{t: t, heartbeat: time.Second, nextID: 1200000000000000000,
		channels: map[string]*channel{}, release: make(chan struct{})}
	p.Gateway = peerkit.NewGateway(t, "discordpeer", nil)
	mux := http.NewServeMux()
	for _, path := range []string{"/gateway", "/gateway/", "/resume-gateway", "/resume-gateway/"} {
		mux.HandleFunc(path, p.gateway) // with or without a trailing slash
	}
	mux.Handle("/attachments/", &p.files)
	mux.HandleFunc("/api/", p.rest)
	mux.HandleFunc("/", peerkit.Unserved(t, "Discord"))
	p.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		p.Release()
		p.CloseGateway(1001)
		p.srv.Close()
	})
	return p
}

// URL is the base to configure the bot with (channels.discord.apiBase).
func (p *Peer) URL() string { return p.srv.URL }

// SetHeartbeat sets the heartbeat_interval HELLO announces (1 s by default).
func (p *Peer) SetHeartbeat(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.heartbeat = d
}

// ID is a new snowflake.
func (p *Peer) ID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.idLocked()
}

func (p *Peer) idLocked() string {
	p.nextID++
	return fmt.Sprint(p.nextID)
}

// DM registers a direct-message channel.
func (p *Peer) DM(id string) { p.addChannel(&channel{id: id, kind: TypeDM}) }

// GuildChannel registers a text channel of a guild.
func (p *Peer) GuildChannel(guildID, id string) {
	p.addChannel(&channel{id: id, guildID: guildID, kind: TypeGuildText, name: "general"})
}

// Thread registers a public thread of a guild channel.
func (p *Peer) Thread(guildID, parentID, id string) {
	p.addChannel(&channel{id: id, guildID: guildID, parentID: parentID, kind: TypePublicThread, name: "a thread"})
}

func (p *Peer) addChannel(c *channel) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.channels[c.id] = c
}

// AddFile serves an attachment and returns its URL.
func (p *Peer) AddFile(channelID, attachmentID, name string, data []byte) string {
	path := "/attachments/" + channelID + "/" + attachmentID + "/" + name
	p.files.Add(path, data, nil)
	return p.srv.URL + path + "?ex=peer&is=peer&hm=signature"
}

// Fail answers the next request whose method matches and whose path (after
// /api/v{n}) starts with pathPrefix with status and a JSON body.
func (p *Peer) Fail(method, pathPrefix string, status int, body string) {
	p.failures.Add(peerkit.Failure{Method: method, Path: pathPrefix, Status: status, Body: body})
}

// HoldPost keeps the n-th POST .../messages (counting from 1) unanswered
// until Release; the returned channel closes when it arrives. A held post
// whose client goes away was never made.
func (p *Peer) HoldPost(n int) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holdAt, p.held = n, make(chan struct{})
	return p.held
}

// HoldReaction keeps the next PUT of this reaction unanswered until
// Release; the returned channel closes when it arrives.
func (p *Peer) HoldReaction(emoji string) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holdEmoji, p.held = emoji, make(chan struct{})
	return p.held
}

// Release answers the held post (and stops holding).
func (p *Peer) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.release:
	default:
		close(p.release)
	}
}

// Messages are the messages the bot posted in a channel, as they show now.
func (p *Peer) Messages(channelID string) []Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Message
	for _, m := range p.messages {
		if m.ChannelID == channelID {
			out = append(out, *m)
		}
	}
	return out
}

// Stats count the gateway's traffic so far.
func (p *Peer) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Intents are what the bot asked for in its IDENTIFY.
func (p *Peer) Intents() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.intents
}

func (p *Peer) botUser() map[string]any {
	return map[string]any{"id": BotID, "username": BotName, "discriminator": "0", "global_name": nil, "avatar": nil, "bot": true}
}

// guildsLocked are the GUILD_CREATE payloads of the registered guilds.
func (p *Peer) guildsLocked() []map[string]any {
	byGuild := map[string]map[string]any{}
	var order []string
	for _, c := range p.channels {
		if c.guildID == "" {
			continue
		}
		g := byGuild[c.guildID]
		if g == nil {
			g = map[string]any{"id": c.guildID, "name": "peer guild", "owner_id": "1", "unavailable": false,
				"member_count": 2, "large": false, "joined_at": "2024-01-01T00:00:00.000000+00:00",
				"channels": []map[string]any{}, "threads": []map[string]any{}, "members": []any{}, "roles": []any{}, "emojis": []any{}}
			byGuild[c.guildID] = g
			order = append(order, c.guildID)
		}
		key := "channels"
		if c.parentID != "" {
			key = "threads"
		}
		g[key] = append(g[key].([]map[string]any), c.payload())
	}
	var out []map[string]any
	for _, id := range order {
		out = append(out, byGuild[id])
	}
	return out
}

func (c *channel) payload() map[string]any {
	m := map[string]any{"id": c.id, "type": c.kind}
	if c.guildID != "" {
		m["guild_id"], m["name"] = c.guildID, c.name
	}
	if c.parentID != "" {
		m["parent_id"] = c.parentID
		m["thread_metadata"] = map[string]any{"archived": false, "auto_archive_duration": 1440, "locked": false}
	}
	if c.kind == TypeDM {
		m["recipients"] = []any{map[string]any{"id": "1", "username": "someone"}}
	}
	return m
}

func writeJSON(w http.ResponseWriter, status int, v any) { peerkit.WriteJSON(w, status, v) }
