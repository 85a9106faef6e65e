// Package dingtalkpeer is a fake DingTalk for tests, at the wire: the
// Stream mode registration (gateway/connections/open → endpoint and
// ticket), the stream WebSocket pushing SYSTEM and CALLBACK frames and
// reading the app's responses (pongs, acks), the access token, the robot
// send APIs, the messages' sessionWebhooks, file download codes and media
// upload. It records what the bot sent, can push robot messages and raw
// frames, drop the socket or ask the bot to reconnect, revoke tokens and
// answer with errors (a 429, a throttling code).
package dingtalkpeer

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nanobot-durable/nanobot/channels/peerkit"
)

// The app the peer knows.
const (
	ClientID     = "dingpeerclientid"
	ClientSecret = "peer-client-secret-0123456789"
	// RobotUserID is the robot's chatbotUserId.
	RobotUserID = "$:LWCP_v1:$robot"
)

// Sent is a message the bot sent.
type Sent struct {
	// Via is "webhook" (a sessionWebhook) or "api" (the robot send API).
	Via string
	// ChatID is the user's staff id, or "group:" and the conversation.
	ChatID string
	// MsgKey is the robot API's msgKey; "markdown" for a webhook message.
	MsgKey string
	Title  string
	Text   string
	// Param is the msgParam (the webhook's markdown object).
	Param map[string]string
}

// Upload is a file the bot uploaded.
type Upload struct {
	Type, Name, MediaID string
	Data                []byte
}

// Response is a frame the bot wrote on the stream.
type Response struct {
	Code    int               `json:"code"`
	Headers map[string]string `json:"headers"`
	Message string            `json:"message"`
	Data    string            `json:"data"`
}

// Stats count the peer's traffic.
type Stats struct {
	Opens       int // registrations
	Connections int // stream sockets opened
	Tokens      int // access tokens issued
	Downloads   int // download codes exchanged
}

// Peer is a running fake DingTalk.
type Peer struct {
	t        testing.TB
	srv      *httptest.Server
	failures peerkit.Failures

	mu        sync.Mutex
	stats     Stats
	tickets   map[string]bool // issued, not yet used
	conn      *conn
	pending   [][]byte // frames pushed while no socket was open
	responses []Response
	nextID    int
	tokens    map[string]bool
	expireIn  int
	sessions  map[string]string // sessionWebhook session → chat id
	sent      []Sent
	uploads   []Upload
	files     map[string][]byte // download code → content
	users     map[string]string // staff id → userInvalid or userFlowControlled
	subs      []map[string]string
}

// New starts the peer on 127.0.0.1; it stops when the test ends.
func New(t testing.TB) *Peer {
	t.Helper()
	p := &Peer{t: t, tickets: map[string]bool{}, tokens: map[string]bool{}, expireIn: 7200,
		sessions: map[string]string{}, files: map[string][]byte{}, users: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1.0/gateway/connections/open", p.open)
	mux.HandleFunc("GET /connect", p.stream)
	mux.HandleFunc("POST /v1.0/oauth2/accessToken", p.accessToken)
	mux.HandleFunc("POST /v1.0/robot/oToMessages/batchSend", p.robotSend)
	mux.HandleFunc("POST /v1.0/robot/groupMessages/send", p.robotSend)
	mux.HandleFunc("POST /robot/sendBySession", p.webhook)
	mux.HandleFunc("POST /v1.0/robot/messageFiles/download", p.downloadURL)
	mux.HandleFunc("GET /files/{code}", p.file)
	mux.HandleFunc("POST /media/upload", p.upload)
	mux.HandleFunc("/", peerkit.Unserved(t, "DingTalk"))
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.Close)
	return p
}

// URL is the apiBase to give the channel.
func (p *Peer) URL() string { return p.srv.URL }

// Close stops the peer.
func (p *Peer) Close() {
	p.mu.Lock()
	c := p.conn
	p.mu.Unlock()
	if c != nil {
		_ = c.ws.Close()
	}
	p.srv.Close()
}

// Stats are the traffic counts so far.
func (p *Peer) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Subscriptions are what the last registration asked for.
func (p *Peer) Subscriptions() []map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.subs
}

// Sent are the messages the bot sent to chat, in order.
func (p *Peer) Sent(chat string) []Sent {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Sent
	for _, s := range p.sent {
		if s.ChatID == chat {
			out = append(out, s)
		}
	}
	return out
}

// Uploads are the files the bot uploaded.
func (p *Peer) Uploads() []Upload {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Upload(nil), p.uploads...)
}

// SetTokenLifetime makes the next access tokens expire after d.
func (p *Peer) SetTokenLifetime(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expireIn = int(d.Seconds())
}

// RevokeTokens makes every token issued so far unknown.
func (p *Peer) RevokeTokens() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tokens = map[string]bool{}
}

// Fail answers the next request to path with status, body (and header)
// instead of the real answer.
func (p *Peer) Fail(path string, status int, body string, header http.Header) {
	p.failures.Add(peerkit.Failure{Path: path, Status: status, Body: body, Header: header})
}

// AddFile makes a download code serve data.
func (p *Peer) AddFile(code string, data []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.files[code] = data
}

// failed writes an injected failure for r, if one waits.
func (p *Peer) failed(w http.ResponseWriter, r *http.Request) bool {
	f, ok := p.failures.Take("", r.URL.Path)
	if ok {
		f.Write(w)
	}
	return ok
}

func (p *Peer) id(prefix string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nextID++
	return fmt.Sprintf("%s%06d", prefix, p.nextID)
}

func writeJSON(w http.ResponseWriter, status int, v any) { peerkit.WriteJSON(w, status, v) }

// wsURL is the peer's address as a WebSocket URL.
func (p *Peer) wsURL() string { return "ws" + strings.TrimPrefix(p.srv.URL, "http") }
