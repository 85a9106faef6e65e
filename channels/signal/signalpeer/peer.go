// Package signalpeer is a fake signal-cli HTTP daemon for tests, at the
// wire (signal-cli-jsonrpc(5)): GET /api/v1/check; GET /api/v1/events, a
// Server-Sent Events stream of received messages, each event with an id,
// the last 1000 kept and sent again after a Last-Event-ID (all of them for
// an id the daemon does not know), a keep-alive comment every 15 s; and
// POST /api/v1/rpc, JSON-RPC 2.0 with the methods the channel calls (send,
// sendTyping, updateConfiguration). Received attachments are written to
// its attachments folder, as the daemon does. It records what the bot sent.
package signalpeer

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The bot's account.
const (
	Account     = "+15550000001"
	AccountUUID = "0b0b0b0b-1111-4111-8111-000000000001"
)

// Contact is someone who writes to the bot.
type Contact struct{ Number, UUID, Name string }

// People of the tests.
var (
	Alice = Contact{"+15550000002", "a11ce000-2222-4222-8222-000000000002", "Alice"}
	Bob   = Contact{"+15550000003", "b0b00000-3333-4333-8333-000000000003", "Bob"}
)

// GroupID is a group the bot is in (base64 of 32 bytes, as Signal's are).
var GroupID = base64.StdEncoding.EncodeToString([]byte("nanobot-signalpeer-group-0000001"))

// RefuseFiles makes the daemon refuse every send with an attachment as
// invalid params: a refusal the same call meets again.
func (p *Peer) RefuseFiles() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuseFiles = true
}

// Sent is one send call.
type Sent struct {
	Recipients  []string
	GroupID     string
	Message     string
	Attachments []string
	TextStyle   []string
	Timestamp   int64
}

// Typing is one sendTyping call.
type Typing struct {
	Recipient, GroupID string
	Stop               bool
}

// maxEvents is how many events signal-cli keeps for a client that reconnects.
const maxEvents = 1000

type event struct {
	seq  int64
	data []byte
}

// Peer is a running fake daemon.
type Peer struct {
	t           testing.TB
	srv         *httptest.Server
	attachments string
	prefix      string // event ids are prefix+seq, prefix naming the daemon's run

	mu          sync.Mutex
	seq         int64
	clock       int64
	events      []event
	streams     map[chan event]chan struct{} // open streams and their closers
	connections int
	lastIDs     []string // the Last-Event-ID of each connection ("" for none)
	forget      bool
	sent        []Sent
	typing      []Typing
	methods     []string
	files       map[string][]byte // what the bot attached, by path
	refuseFiles bool
}

// New starts the daemon on 127.0.0.1; it stops when the test ends.
func New(t testing.TB) *Peer {
	t.Helper()
	p := &Peer{t: t, attachments: t.TempDir(), prefix: strconv.FormatInt(time.Now().UnixMilli(), 10) + "-",
		clock: time.Now().UnixMilli(), streams: map[chan event]chan struct{}{}, files: map[string][]byte{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/check", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("/api/v1/events", p.serveEvents)
	mux.HandleFunc("/api/v1/rpc", p.serveRPC)
	p.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		p.Drop()
		p.srv.Close()
	})
	return p
}

// Host and Port are channels.signal.daemonHost and daemonPort.
func (p *Peer) Host() string { h, _, _ := net.SplitHostPort(p.srv.Listener.Addr().String()); return h }

func (p *Peer) Port() int {
	_, port, _ := net.SplitHostPort(p.srv.Listener.Addr().String())
	n, _ := strconv.Atoi(port)
	return n
}

// AttachmentsDir is channels.signal.attachmentsDir.
func (p *Peer) AttachmentsDir() string { return p.attachments }

// DM delivers a direct message from c; it returns its timestamp.
func (p *Peer) DM(c Contact, text string) int64 {
	return p.deliver(c, map[string]any{"message": text})
}

// Group delivers a message from c in GroupID, mentioning the bot if asked
// (the mention's placeholder leads the text, as Signal's apps put it).
func (p *Peer) Group(c Contact, text string, mentionBot bool) int64 {
	dm := map[string]any{"message": text, "groupInfo": map[string]any{"groupId": GroupID, "type": "DELIVER"}}
	if mentionBot {
		dm["message"] = "\uFFFC " + text
		dm["mentions"] = []map[string]any{{"name": Account, "number": Account, "uuid": AccountUUID, "start": 0, "length": 1}}
	}
	return p.deliver(c, dm)
}

// File delivers a direct message from c carrying a file, written where
// the daemon writes attachments.
func (p *Peer) File(c Contact, text, name, contentType string, data []byte) int64 {
	id := fmt.Sprintf("att%d.bin", time.Now().UnixNano())
	if err := os.WriteFile(filepath.Join(p.attachments, id), data, 0o600); err != nil {
		p.t.Errorf("signalpeer: write attachment: %v", err)
	}
	return p.deliver(c, map[string]any{"message": text, "attachments": []map[string]any{
		{"contentType": contentType, "filename": name, "id": id, "size": len(data)}}})
}

// Raw sends data as an event of the stream, as it is (a bad payload).
func (p *Peer) Raw(data string) { p.publish([]byte(data)) }

func (p *Peer) deliver(c Contact, dataMessage map[string]any) int64 {
	p.mu.Lock()
	p.clock++
	ts := p.clock
	p.mu.Unlock()
	dataMessage["timestamp"] = ts
	body, err := json.Marshal(map[string]any{"account": Account, "envelope": map[string]any{
		"source": c.Number, "sourceNumber": c.Number, "sourceUuid": c.UUID, "sourceName": c.Name,
		"sourceDevice": 1, "timestamp": ts, "serverReceivedTimestamp": ts, "dataMessage": dataMessage}})
	if err != nil {
		p.t.Errorf("signalpeer: %v", err)
	}
	p.publish(body)
	return ts
}

// publish keeps an event and sends it to the open streams.
func (p *Peer) publish(data []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	ev := event{seq: p.seq, data: data}
	p.events = append(p.events, ev)
	if len(p.events) > maxEvents {
		p.events = p.events[1:]
	}
	for s, closed := range p.streams {
		select {
		case s <- ev:
		case <-closed:
		}
	}
}

// Drop closes every open event stream (the daemon's connection lost).
func (p *Peer) Drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for s, closed := range p.streams {
		close(closed)
		delete(p.streams, s)
	}
}

// ForgetIDs makes the next stream's Last-Event-ID unknown, as after the
// id fell out of the daemon's memory: every kept event is sent again.
func (p *Peer) ForgetIDs() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.forget = true
}

// Connected tells whether a stream is open.
func (p *Peer) Connected() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.streams) > 0
}

// Connections are the streams opened so far, and the Last-Event-ID each came with.
func (p *Peer) Connections() (int, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.connections, append([]string(nil), p.lastIDs...)
}

// Sent are the send calls to a chat (a number, or a group id), in order.
func (p *Peer) Sent(chat string) []Sent {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Sent
	for _, s := range p.sent {
		if s.GroupID == chat || (len(s.Recipients) == 1 && s.Recipients[0] == chat) {
			out = append(out, s)
		}
	}
	return out
}

// Messages are the texts sent to a chat, in order.
func (p *Peer) Messages(chat string) []string {
	var out []string
	for _, s := range p.Sent(chat) {
		out = append(out, s.Message)
	}
	return out
}

// Typing are the sendTyping calls, in order.
func (p *Peer) Typing() []Typing {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Typing(nil), p.typing...)
}

// Methods are the JSON-RPC methods called, in order.
func (p *Peer) Methods() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.methods...)
}

// File is a file the bot attached, as the daemon read it when sending.
func (p *Peer) Attached(path string) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.files[path]
}

// Contains reports whether s is among the chat's messages.
func (p *Peer) Contains(chat, s string) bool {
	for _, m := range p.Messages(chat) {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}
