// Package qqpeer is a fake QQ Bot API for tests, at the wire: the token
// service (app/getAppAccessToken), GET /gateway, the gateway WebSocket
// speaking QQ's opcodes — HELLO, IDENTIFY → READY, heartbeats and their
// ACKs, dispatches with sequence numbers, RESUME with the replay of what
// the bot missed, op 7 and op 9 — and the REST endpoints the bot replies
// through (C2C and group messages, rich-media uploads). It records what
// the bot sent, refuses a repeated msg_seq as QQ does, expires tokens,
// and can answer with errors (a 429).
package qqpeer

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/nanobot-durable/nanobot/channels/peerkit"
)

// The app the peer knows.
const (
	AppID   = "102000001"
	Secret  = "peer-app-secret"
	BotID   = "9876543210"
	BotName = "nanobot-peer"
)

// Message is one message the bot posted.
type Message struct {
	// Group tells /v2/groups from /v2/users.
	Group   bool
	ChatID  string
	MsgType int
	// Content is the text of msg_type 0, or the Markdown of msg_type 2.
	Content string
	MsgID   string
	MsgSeq  int
	// FileInfo is the media of msg_type 7.
	FileInfo string
}

// Upload is one rich-media upload (POST .../files).
type Upload struct {
	Group    bool
	ChatID   string
	FileType int
	FileName string
	URL      string
	Data     []byte
}

// Call is one REST request the bot made.
type Call = peerkit.Call

// Stats count the peer's traffic.
type Stats struct {
	Connections     int
	Identifies      int
	Resumes         int
	InvalidSessions int
	Heartbeats      int
	// HeartbeatSeqs are the d of each heartbeat (-1 for null).
	HeartbeatSeqs []int64
	TokensIssued  int
	// TokenExpiries are when each issued token runs out, in order.
	TokenExpiries []time.Time
	// TokenIssues are when each was issued, in order.
	TokenIssues  []time.Time
	Unauthorized int
}

// Peer is a running fake QQ.
type Peer struct {
	peerkit.Recorder // the REST calls the bot made
	*peerkit.Gateway // the bot's WebSocket: dispatch, close, forget the session, op 7
	t                testing.TB
	srv              *httptest.Server
	failures         peerkit.Failures
	files            peerkit.Files // the CDN

	mu        sync.Mutex
	heartbeat time.Duration
	tokens    *peerkit.Tokens
	intents   int
	shard     []int
	stats     Stats
	nextID    int
	messages  []Message
	uploads   []Upload
	seqsUsed  map[string]bool // msg_id + msg_seq already answered
}

// New starts the peer on 127.0.0.1; it stops when the test ends.
func New(t testing.TB) *Peer {
	t.Helper()
	p := &Peer{t: t, heartbeat: time.Second, tokens: peerkit.NewTokens("peer-access-token", 7200*time.Second),
		seqsUsed: map[string]bool{}}
	p.Gateway = peerkit.NewGateway(t, "qqpeer", qqFrame)
	mux := http.NewServeMux()
	mux.HandleFunc("/app/getAppAccessToken", p.token)
	mux.HandleFunc("/websocket", p.gateway)
	mux.Handle("/cdn/", &p.files)
	mux.HandleFunc("/", p.rest)
	p.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		p.CloseGateway(1001)
		p.srv.Close()
	})
	return p
}

// URL is the base to configure the bot with (channels.qq.apiBase and authBase).
func (p *Peer) URL() string { return p.srv.URL }

// SetHeartbeat sets the heartbeat_interval HELLO announces (1 s by default).
func (p *Peer) SetHeartbeat(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.heartbeat = d
}

// SetTokenTTL sets the expires_in of the tokens issued from now on.
func (p *Peer) SetTokenTTL(seconds int) { p.tokens.SetTTL(time.Duration(seconds) * time.Second) }

// ExpireTokens makes every token issued so far invalid (401 on REST).
func (p *Peer) ExpireTokens() { p.tokens.Revoke() }

// AddFile serves an attachment on the peer's CDN and returns its URL.
func (p *Peer) AddFile(name string, data []byte) string {
	path := "/cdn/" + name
	p.files.Add(path, data, http.Header{"Content-Type": {"application/octet-stream"}})
	return p.srv.URL + path + "?sig=peer"
}

// Fail answers the next request whose method matches and whose path starts
// with pathPrefix with status and a JSON body.
func (p *Peer) Fail(method, pathPrefix string, status int, body string) {
	p.failures.Add(peerkit.Failure{Method: method, Path: pathPrefix, Status: status, Body: body})
}

// Messages are the messages the bot posted to a chat, in order.
func (p *Peer) Messages(chatID string) []Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Message
	for _, m := range p.messages {
		if m.ChatID == chatID {
			out = append(out, m)
		}
	}
	return out
}

// Uploads are the rich-media uploads, in order.
func (p *Peer) Uploads() []Upload {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Upload(nil), p.uploads...)
}

// Stats count the traffic so far.
func (p *Peer) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.HeartbeatSeqs = append([]int64(nil), s.HeartbeatSeqs...)
	s.TokenIssues = append([]time.Time(nil), s.TokenIssues...)
	s.TokenExpiries = append([]time.Time(nil), s.TokenExpiries...)
	return s
}

// Intents and Shard are what the bot sent in its last IDENTIFY.
func (p *Peer) Intents() (int, []int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.intents, p.shard
}

// ID is a new message id, shaped as QQ's.
func (p *Peer) ID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.idLocked()
}

func (p *Peer) idLocked() string {
	p.nextID++
	return fmt.Sprintf("ROBOT1.0_peer%08d", p.nextID)
}

// validLocked: the Authorization value carries a token still valid.
func (p *Peer) validLocked(auth string) bool { return p.tokens.ValidBearer(auth, "QQBot") }

// token serves POST /app/getAppAccessToken.
func (p *Peer) token(w http.ResponseWriter, r *http.Request) {
	var in struct {
		AppID        string `json:"appId"`
		ClientSecret string `json:"clientSecret"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&in) != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"code": 100007, "message": "invalid request"})
		return
	}
	if in.AppID != AppID || in.ClientSecret != Secret {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"code": 100016, "message": "invalid appid or secret"})
		return
	}
	now := time.Now()
	tok, ttl := p.tokens.Issue()
	p.mu.Lock()
	p.stats.TokensIssued++
	p.stats.TokenIssues = append(p.stats.TokenIssues, now)
	p.stats.TokenExpiries = append(p.stats.TokenExpiries, now.Add(ttl))
	p.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "expires_in": fmt.Sprint(int(ttl / time.Second))})
}

func writeJSON(w http.ResponseWriter, status int, v any) { peerkit.WriteJSON(w, status, v) }

func (p *Peer) wsURL() string { return peerkit.WSURL(p.srv.URL, "/websocket") }
