// Package feishupeer is a fake Feishu / Lark open platform for tests, at
// the wire: the long connection's endpoint discovery (POST
// /callback/ws/endpoint) and its WebSocket speaking pbbp2 frames — pings
// answered with pongs carrying the client config, events pushed as data
// frames (fragmented by sum/seq if asked), acks recorded — and the REST
// calls the bot makes: the tenant access token, bot info, messages sent,
// replied, updated (PATCH), reactions, image and file uploads, resource
// downloads. It records what the bot did, can drop the connection,
// redeliver an event, expire tokens and answer with errors (a 429).
package feishupeer

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/nanobot-durable/nanobot/channels/peerkit"
)

// The app the peer knows.
const (
	AppID     = "cli_peer_app"
	AppSecret = "peer-app-secret"
	BotOpenID = "ou_peer_bot_0001"
	BotName   = "nanobot-peer"
)

// ClientConfig is the long connection's timing the peer hands out (seconds).
type ClientConfig struct {
	ReconnectCount    int `json:"ReconnectCount"`
	ReconnectInterval int `json:"ReconnectInterval"`
	ReconnectNonce    int `json:"ReconnectNonce"`
	PingInterval      int `json:"PingInterval"`
}

// Message is a message the bot sent, as it shows now.
type Message struct {
	ID      string
	ChatID  string // receive_id, or the replied message's chat
	MsgType string
	Content string // JSON, as sent
	// ReplyTo is the message replied to ("" for a new message).
	ReplyTo  string
	InThread bool
	Edits    int
	// Shown is every content the message showed, in order: as sent, then each update.
	Shown []string
}

// Drawn is what the message showed after each step (Text of each of Shown):
// how a streamed card was drawn.
func (m Message) Drawn() []string {
	var out []string
	for _, c := range m.Shown {
		out = append(out, Message{MsgType: m.MsgType, Content: c}.Text())
	}
	return out
}

// Text is what a card, text or post shows: its markdown and div texts, one per line.
func (m Message) Text() string {
	var card struct {
		Elements []struct {
			Tag     string `json:"tag"`
			Content string `json:"content"`
			Text    struct {
				Content string `json:"content"`
			} `json:"text"`
		} `json:"elements"`
		Text string `json:"text"`
	}
	if json.Unmarshal([]byte(m.Content), &card) != nil {
		return m.Content
	}
	if m.MsgType == "text" {
		return card.Text
	}
	var lines []string
	for _, e := range card.Elements {
		switch e.Tag {
		case "markdown":
			lines = append(lines, e.Content)
		case "div":
			lines = append(lines, e.Text.Content)
		default:
			lines = append(lines, "["+e.Tag+"]")
		}
	}
	return strings.Join(lines, "\n")
}

// Upload is a file or image the bot uploaded.
type Upload struct {
	Key  string
	Kind string // "image" or "file"
	Name string
	Type string // file_type or image_type
	Data []byte
}

// Call is one REST request the bot made.
type Call struct {
	Method string
	Path   string
	Body   string
}

// Ack is the bot's answer to an event frame.
type Ack struct {
	MessageID string // the frame's message_id header
	Payload   string
	BizRT     string
}

// failure is an answer to give instead of the real one.
type failure struct {
	method, pathPrefix string
	status, code       int
	times              int
}

type resourceFile struct {
	name string
	data []byte
}

// Peer is a running fake Feishu.
type Peer struct {
	t   testing.TB
	srv *httptest.Server

	mu          sync.Mutex
	config      ClientConfig
	pongConfig  *ClientConfig
	conn        *websocket.Conn
	connWrite   sync.Mutex
	connections int
	pings       int
	service     int
	tokens      map[string]bool
	issued      int
	tokenExpire int
	nextID      int
	messages    []*Message
	calls       []Call
	acks        []Ack
	uploads     []Upload
	reactions   map[string][]string // message id → "+EMOJI" / "-EMOJI"
	reactionIDs map[string]string   // reaction id → message id + emoji
	resources   map[string]resourceFile
	failures    []*failure
	frames      map[string][][]byte // event message id → the frames that carried it
	fragment    int                 // split the next event in this many frames
	chatOf      map[string]string   // user message id → the chat replies land in
	encryptKey  string
	refuse      *handshakeRefusal
	scanAfter   int
	brand       string
	polls       int
	sent        map[string]sentMessage // the users' messages, by id
}

// New starts the peer on 127.0.0.1; it stops when the test ends.
func New(t testing.TB) *Peer {
	t.Helper()
	p := &Peer{t: t, config: ClientConfig{ReconnectCount: -1, ReconnectInterval: 1, ReconnectNonce: 0, PingInterval: 120},
		service: 7, tokens: map[string]bool{}, tokenExpire: 7200, reactions: map[string][]string{},
		reactionIDs: map[string]string{}, resources: map[string]resourceFile{}, frames: map[string][][]byte{}, chatOf: map[string]string{}, sent: map[string]sentMessage{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /callback/ws/endpoint", p.endpoint)
	mux.HandleFunc("GET /ws", p.websocket)
	mux.HandleFunc("POST /oauth/v1/app/registration", p.registration)
	mux.HandleFunc("POST /open-apis/auth/v3/tenant_access_token/internal", p.tenantToken)
	mux.HandleFunc("/open-apis/", p.rest)
	mux.HandleFunc("/", peerkit.Unserved(t, "Feishu"))
	p.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		p.Drop()
		p.srv.Close()
	})
	return p
}

// URL is the peer's base: the channel's apiBase.
func (p *Peer) URL() string { return p.srv.URL }

// SetClientConfig is what the endpoint discovery hands out from now on.
func (p *Peer) SetClientConfig(cc ClientConfig) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.config = cc
}

// PongConfig makes pongs carry cc (nil: pongs without a payload).
func (p *Peer) PongConfig(cc *ClientConfig) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pongConfig = cc
}

// TokenExpire is the lifetime (seconds) of the tokens issued from now on.
func (p *Peer) TokenExpire(s int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tokenExpire = s
}

// ExpireTokens makes every token issued so far invalid.
func (p *Peer) ExpireTokens() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.tokens)
}

// TokensIssued counts tenant tokens handed out.
func (p *Peer) TokensIssued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.issued
}

// Fail answers the next times requests to method and path prefix with
// status and Feishu code (429 and 99991400: the rate limit).
func (p *Peer) Fail(method, pathPrefix string, status, code, times int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failures = append(p.failures, &failure{method: method, pathPrefix: pathPrefix, status: status, code: code, times: times})
}

// Resource serves a file the user sent, for GET …/resources/{key}.
func (p *Peer) Resource(key, name string, data []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.resources[key] = resourceFile{name: name, data: data}
}

// Messages are the messages the bot sent to a chat (a p2p chat: the user's open_id).
func (p *Peer) Messages(chat string) []Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Message
	for _, m := range p.messages {
		if m.ChatID == chat {
			c := *m
			c.Shown = append([]string(nil), m.Shown...)
			out = append(out, c)
		}
	}
	return out
}

// Calls are the REST requests made so far.
func (p *Peer) Calls() []Call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Call(nil), p.calls...)
}

// CallsTo counts the requests to method and path (query dropped).
func (p *Peer) CallsTo(method, path string) int {
	n := 0
	for _, c := range p.Calls() {
		if c.Method == method && strings.SplitN(c.Path, "?", 2)[0] == path {
			n++
		}
	}
	return n
}

// Acks are the bot's answers to event frames.
func (p *Peer) Acks() []Ack {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Ack(nil), p.acks...)
}

// Acked tells whether the event carrying the message was acked.
func (p *Peer) Acked(messageID string) bool {
	for _, a := range p.Acks() {
		if a.MessageID == messageID {
			return true
		}
	}
	return false
}

// Uploads are the files and images the bot uploaded.
func (p *Peer) Uploads() []Upload {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Upload(nil), p.uploads...)
}

// Reactions on a message, in order: "+EMOJI" put on, "-EMOJI" taken off.
func (p *Peer) Reactions(messageID string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.reactions[messageID]...)
}

func (p *Peer) newID(prefix string) string {
	p.nextID++
	return fmt.Sprintf("%s%06d", prefix, p.nextID)
}
