// Package weixinpeer is a fake iLink bot API for tests, at the wire: the
// QR login (get_bot_qrcode, get_qrcode_status answering "wait" until the
// test confirms the scan), the getupdates long poll honouring its cursor,
// sendmessage, getconfig and sendtyping recorded, a CDN serving encrypted
// media, a stale token answered with errcode -14, and failures on demand.
package weixinpeer

import (
	"bytes"
	"crypto/aes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The account the peer logs in.
const (
	Token  = "peer-bot-token"
	BotID  = "peerbot@im.bot"
	Scaner = "owner@im.wechat"
)

// Sent is a message the bot sent.
type Sent struct {
	To           string
	ClientID     string
	ContextToken string
	Text         string
	Items        []json.RawMessage
	// Files are the media items, decrypted from what was uploaded.
	Files []File
}

// File is a medium the bot uploaded and sent.
type File struct {
	Type int // 2 image, 3 voice, 4 file, 5 video
	Name string
	Data []byte
}

// Typing is one sendtyping call.
type Typing struct {
	User   string
	Ticket string
	Status int
}

// Poll is one getupdates request.
type Poll struct {
	Buf   string
	Token string
}

// Peer is the fake server.
type Peer struct {
	t   *testing.T
	srv *httptest.Server

	mu      sync.Mutex
	token   string // the token getupdates accepts
	qrs     int
	scanned bool // the next status poll is confirmed
	msgs    []json.RawMessage
	wake    chan struct{}
	polls   []Poll
	sent    []Sent
	typing  []Typing
	calls   map[string]int
	// routeTags count the SKRouteTag headers seen.
	routeTags map[string]int
	fail      map[string][]int // endpoint → HTTP statuses to answer next
	media     map[string][]byte
	keys      map[string]string // filekey → the hex AES key getuploadurl got
	uploads   map[string]upload // download param → what was uploaded
	// Hold is how long getupdates waits for a message before answering empty.
	Hold time.Duration
}

// New starts a peer, closed with the test.
func New(t *testing.T) *Peer {
	p := &Peer{t: t, token: Token, wake: make(chan struct{}), calls: map[string]int{}, routeTags: map[string]int{}, fail: map[string][]int{},
		media: map[string][]byte{}, keys: map[string]string{}, uploads: map[string]upload{}, Hold: 500 * time.Millisecond}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

// URL is the API base (baseUrl); the CDN is under /c2c (CDNURL).
func (p *Peer) URL() string { return p.srv.URL }

// CDNURL is the cdnBaseUrl.
func (p *Peer) CDNURL() string { return p.srv.URL + "/c2c" }

// ConfirmScan makes the next get_qrcode_status answer "confirmed".
func (p *Peer) ConfirmScan() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.scanned = true
}

// QRCodes counts the QR codes handed out.
func (p *Peer) QRCodes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.qrs
}

// Expire makes the current token stale: getupdates and sendmessage
// answer errcode -14 until a new login (which issues newToken).
func (p *Peer) Expire(newToken string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.token = newToken
}

// Message is a message a user sends to the bot.
type Message struct {
	ID           string
	From         string
	Text         string
	ContextToken string
	// Items replace the text item when set (images, quotes).
	Items []map[string]any
	// MessageType 2 is the bot's own message echoed back.
	MessageType int
}

// Say queues a message for the next getupdates and returns its id.
func (p *Peer) Say(m Message) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m.ID == "" {
		m.ID = strconv.Itoa(7000 + len(p.msgs))
	}
	if m.ContextToken == "" {
		m.ContextToken = "ctx-" + m.From
	}
	if m.MessageType == 0 {
		m.MessageType = 1
	}
	items := m.Items
	if items == nil {
		items = []map[string]any{{"type": 1, "text_item": map[string]any{"text": m.Text}}}
	}
	id, _ := strconv.Atoi(m.ID)
	raw, _ := json.Marshal(map[string]any{
		"seq": len(p.msgs) + 1, "message_id": id, "from_user_id": m.From, "to_user_id": BotID,
		"create_time_ms": time.Now().UnixMilli(), "message_type": m.MessageType, "message_state": 2,
		"item_list": items, "context_token": m.ContextToken,
	})
	p.msgs = append(p.msgs, raw)
	p.wakeLocked()
	return m.ID
}

// Raw queues a raw message (a broken one) for the next getupdates.
func (p *Peer) Raw(raw string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, json.RawMessage(raw))
	p.wakeLocked()
}

// Redeliver queues message i (0-based) again, as a server replaying after a cursor reset.
func (p *Peer) Redeliver(i int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, p.msgs[i])
	p.wakeLocked()
}

func (p *Peer) wakeLocked() {
	close(p.wake)
	p.wake = make(chan struct{})
}

// Image stores data encrypted on the CDN and returns the image item of a
// message carrying it (aeskey in hex, as WeChat sends images).
func (p *Peer) Image(data []byte) map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := []byte(fmt.Sprintf("%016d", len(p.media)+1))
	param := "enc-" + strconv.Itoa(len(p.media)+1)
	p.media[param] = encryptECB(data, key)
	return map[string]any{"type": 2, "image_item": map[string]any{
		"aeskey": hex.EncodeToString(key), "media": map[string]any{"encrypt_query_param": param}}}
}

// Fail answers the next requests to endpoint (e.g. "sendmessage") with these HTTP statuses.
func (p *Peer) Fail(endpoint string, statuses ...int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fail[endpoint] = append(p.fail[endpoint], statuses...)
}

// Sent are the messages the bot sent to user.
func (p *Peer) Sent(user string) []Sent {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Sent
	for _, s := range p.sent {
		if s.To == user {
			out = append(out, s)
		}
	}
	return out
}

// Typing are the sendtyping calls.
func (p *Peer) Typing() []Typing {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Typing(nil), p.typing...)
}

// Polls are the getupdates requests so far.
func (p *Peer) Polls() []Poll {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Poll(nil), p.polls...)
}

// Calls counts the requests to endpoint (its last path segment).
func (p *Peer) Calls(endpoint string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[endpoint]
}

// RouteTagged counts the requests that carried SKRouteTag: tag.
func (p *Peer) RouteTagged(tag string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.routeTags[tag]
}

// Connected tells whether the bot polls with the current token.
func (p *Peer) Connected() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pl := range p.polls {
		if pl.Token == p.token {
			return true
		}
	}
	return false
}

// upload is a file put on the CDN: its plain bytes and its key.
type upload struct {
	data   []byte
	keyHex string
}

func decryptECB(data, key []byte) ([]byte, bool) {
	block, err := aes.NewCipher(key)
	if err != nil || len(data) == 0 || len(data)%aes.BlockSize != 0 {
		return nil, false
	}
	out := make([]byte, len(data))
	for i := 0; i < len(data); i += aes.BlockSize {
		block.Decrypt(out[i:i+aes.BlockSize], data[i:i+aes.BlockSize])
	}
	pad := int(out[len(out)-1])
	if pad < 1 || pad > aes.BlockSize || !bytes.Equal(out[len(out)-pad:], bytes.Repeat([]byte{byte(pad)}, pad)) {
		return nil, false
	}
	return out[:len(out)-pad], true
}

func encryptECB(data, key []byte) []byte {
	block, err := aes.NewCipher(key)
	if err != nil {
		panic(err)
	}
	pad := aes.BlockSize - len(data)%aes.BlockSize
	in := append(append([]byte{}, data...), bytes.Repeat([]byte{byte(pad)}, pad)...)
	out := make([]byte, len(in))
	for i := 0; i < len(in); i += aes.BlockSize {
		block.Encrypt(out[i:i+aes.BlockSize], in[i:i+aes.BlockSize])
	}
	return out
}

// cursor is the opaque get_updates_buf: the index of the next message.
func cursor(n int) string { return "buf-" + strconv.Itoa(n) }

func fromCursor(buf string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(buf, "buf-"))
	if err != nil {
		return 0
	}
	return n
}
