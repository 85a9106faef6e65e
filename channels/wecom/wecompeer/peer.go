// Package wecompeer is a fake WeCom for tests, at the wire: the AI bot
// long connection (a WebSocket taking JSON frames {cmd, headers.req_id,
// body}) — aibot_subscribe checked against the bot's id and secret, ping
// acknowledged, callbacks pushed (aibot_msg_callback, aibot_event_callback),
// every frame the bot sends acknowledged with an errcode and recorded
// (stream replies, welcome messages, proactive sends, the three upload
// steps) — and the HTTP server of the encrypted files callbacks point to.
// It can drop the connection, stop answering pings, and answer a command
// with an errcode.
package wecompeer

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/nanobot-durable/nanobot/channels/peerkit"
)

// The bot the peer knows.
const (
	BotID   = "aib-peer-bot"
	Secret  = "peer-bot-secret"
	BotName = "nanobot"
)

// ErrInvalidSecret is the errcode a wrong bot id or secret gets.
const ErrInvalidSecret = 40001

// Sent is one frame the bot sent (subscribe and ping aside).
type Sent struct {
	Cmd   string
	ReqID string
	Body  json.RawMessage
}

// Stream is the stream part of an aibot_respond_msg body.
type Stream struct {
	ID      string `json:"id"`
	Finish  bool   `json:"finish"`
	Content string `json:"content"`
}

// Upload is a file the bot uploaded.
type Upload struct {
	Type, Filename, MD5 string
	MediaID             string
	Data                []byte
}

type failure struct {
	cmd  string
	code int
	msg  string
}

// Peer is a running fake WeCom.
type Peer struct {
	t     testing.TB
	srv   *httptest.Server
	files peerkit.Files // the encrypted files, by path

	mu          sync.Mutex
	conn        *conn
	subscribed  bool
	connections int
	subscribes  int
	pings       int
	silent      bool // pings go unanswered
	sent        []Sent
	failures    []failure
	uploads     map[string]*Upload // by upload_id
	done        []*Upload
	next        int
}

type conn struct {
	ws *websocket.Conn
	mu sync.Mutex
}

func (c *conn) write(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteMessage(websocket.TextMessage, data)
}

// New starts the peer on 127.0.0.1; it stops when the test ends.
func New(t testing.TB) *Peer {
	t.Helper()
	p := &Peer{t: t, uploads: map[string]*Upload{}}
	mux := http.NewServeMux()
	mux.Handle("/files/", &p.files)
	mux.HandleFunc("/", p.socket)
	p.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		p.Drop()
		p.srv.Close()
	})
	return p
}

// URL is the WebSocket address (channels.wecom.wsUrl).
func (p *Peer) URL() string { return "ws" + strings.TrimPrefix(p.srv.URL, "http") }

// HTTPURL is the base of the files' URLs.
func (p *Peer) HTTPURL() string { return p.srv.URL }

// frame is one message on the socket.
type frame struct {
	Cmd     string `json:"cmd,omitempty"`
	Headers struct {
		ReqID string `json:"req_id"`
	} `json:"headers"`
	Body json.RawMessage `json:"body,omitempty"`
}

type ack struct {
	Headers map[string]string `json:"headers"`
	ErrCode int               `json:"errcode"`
	ErrMsg  string            `json:"errmsg"`
	Body    any               `json:"body,omitempty"`
}

func answer(reqID string, code int, msg string, body any) ack {
	if msg == "" {
		msg = "ok"
	}
	return ack{Headers: map[string]string{"req_id": reqID}, ErrCode: code, ErrMsg: msg, Body: body}
}

// socket serves one connection: the first frame must subscribe.
func (p *Peer) socket(w http.ResponseWriter, r *http.Request) {
	ws, err := peerkit.UpgradeConn(w, r)
	if err != nil {
		return
	}
	c := &conn{ws: ws}
	defer ws.Close()
	p.mu.Lock()
	p.connections++
	p.mu.Unlock()
	for {
		_, raw, err := ws.ReadMessage()
		if err != nil {
			p.mu.Lock()
			if p.conn == c {
				p.conn, p.subscribed = nil, false
			}
			p.mu.Unlock()
			return
		}
		var f frame
		if err := json.Unmarshal(raw, &f); err != nil {
			p.t.Errorf("wecompeer: the bot sent a frame that is not JSON: %s", raw)
			return
		}
		if !p.handle(c, f) {
			return
		}
	}
}

// handle answers one frame; false closes the connection.
func (p *Peer) handle(c *conn, f frame) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f.Cmd == "aibot_subscribe" {
		p.subscribes++
		var b struct {
			BotID  string `json:"bot_id"`
			Secret string `json:"secret"`
		}
		_ = json.Unmarshal(f.Body, &b)
		if b.BotID != BotID || b.Secret != Secret {
			_ = c.write(answer(f.Headers.ReqID, ErrInvalidSecret, "invalid secret", nil))
			return false
		}
		if p.conn != nil && p.conn != c {
			_ = p.conn.ws.Close() // WeCom keeps the newest connection of a bot
		}
		p.conn, p.subscribed = c, true
		_ = c.write(answer(f.Headers.ReqID, 0, "", nil))
		return true
	}
	if p.conn != c || !p.subscribed {
		p.t.Errorf("wecompeer: %s before aibot_subscribe", f.Cmd)
		return false
	}
	if f.Cmd == "ping" {
		p.pings++
		if !p.silent {
			_ = c.write(answer(f.Headers.ReqID, 0, "", nil))
		}
		return true
	}
	switch f.Cmd {
	case "aibot_respond_msg", "aibot_respond_welcome_msg", "aibot_send_msg",
		"aibot_upload_media_init", "aibot_upload_media_chunk", "aibot_upload_media_finish":
	default:
		p.t.Errorf("wecompeer: the bot sent cmd %q, which WeCom does not take", f.Cmd)
		return false
	}
	p.sent = append(p.sent, Sent{Cmd: f.Cmd, ReqID: f.Headers.ReqID, Body: f.Body})
	for i, fl := range p.failures {
		if fl.cmd == f.Cmd {
			p.failures = append(p.failures[:i], p.failures[i+1:]...)
			_ = c.write(answer(f.Headers.ReqID, fl.code, fl.msg, nil))
			return true
		}
	}
	body, code, msg := p.upload(f)
	_ = c.write(answer(f.Headers.ReqID, code, msg, body))
	return true
}

// FailNext answers the next frame of cmd with errcode code.
func (p *Peer) FailNext(cmd string, code int, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failures = append(p.failures, failure{cmd: cmd, code: code, msg: msg})
}

// Subscribed tells whether a connection is subscribed now.
func (p *Peer) Subscribed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.subscribed
}

// Stats are the connections, subscribes and pings seen.
func (p *Peer) Stats() (connections, subscribes, pings int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.connections, p.subscribes, p.pings
}

// Silence stops (or resumes) answering pings.
func (p *Peer) Silence(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.silent = on
}

// Drop closes the bot's connection, as a network failure would.
func (p *Peer) Drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn != nil {
		_ = p.conn.ws.Close()
		p.conn, p.subscribed = nil, false
	}
}

// Sent is every frame the bot sent but subscribe and ping, in order.
func (p *Peer) Sent() []Sent {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Sent(nil), p.sent...)
}

// Replies are the stream replies on a callback's req_id, in order.
func (p *Peer) Replies(reqID string) []Stream {
	var out []Stream
	for _, s := range p.Sent() {
		if s.Cmd != "aibot_respond_msg" || s.ReqID != reqID {
			continue
		}
		var b struct {
			MsgType string `json:"msgtype"`
			Stream  Stream `json:"stream"`
		}
		if json.Unmarshal(s.Body, &b) == nil && b.MsgType == "stream" {
			out = append(out, b.Stream)
		}
	}
	return out
}

// Proactive are the Markdown contents sent to a chat with aibot_send_msg.
func (p *Peer) Proactive(chatID string) []string {
	var out []string
	for _, s := range p.Sent() {
		if s.Cmd != "aibot_send_msg" {
			continue
		}
		var b struct {
			ChatID   string `json:"chatid"`
			MsgType  string `json:"msgtype"`
			Markdown struct {
				Content string `json:"content"`
			} `json:"markdown"`
		}
		if json.Unmarshal(s.Body, &b) == nil && b.ChatID == chatID && b.MsgType == "markdown" {
			out = append(out, b.Markdown.Content)
		}
	}
	return out
}

// push sends a callback to the subscribed connection.
func (p *Peer) push(cmd, reqID string, body any) {
	p.t.Helper()
	p.mu.Lock()
	c := p.conn
	p.mu.Unlock()
	if c == nil {
		p.t.Fatalf("wecompeer: no subscribed connection to push %s to", cmd)
	}
	raw, err := json.Marshal(body)
	if err != nil {
		p.t.Fatalf("wecompeer: %v", err)
	}
	if err := c.write(map[string]any{"cmd": cmd, "headers": map[string]string{"req_id": reqID}, "body": json.RawMessage(raw)}); err != nil {
		p.t.Logf("wecompeer: push %s: %v", cmd, err)
	}
}

// Raw writes text as one frame to the subscribed connection.
func (p *Peer) Raw(text string) {
	p.mu.Lock()
	c := p.conn
	p.mu.Unlock()
	if c == nil {
		p.t.Fatalf("wecompeer: no subscribed connection")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.ws.WriteMessage(websocket.TextMessage, []byte(text))
}

func (p *Peer) id(prefix string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	return fmt.Sprintf("%s%06d", prefix, p.next)
}

// Replace plays WeCom's answer to a newer connection of the bot elsewhere:
// disconnected_event on the bot's connection, then the close.
func (p *Peer) Replace() {
	p.t.Helper()
	p.push("aibot_event_callback", p.id("req"), map[string]any{"msgid": p.id("ev"), "aibotid": BotID, "msgtype": "event",
		"create_time": time.Now().Unix(), "event": map[string]string{"eventtype": "disconnected_event"}})
	p.Drop()
}
