// Package slackpeer runs slack-go's slacktest server for tests, with what
// it lacks to stand in for Slack in Socket Mode: the WebSocket pings Slack
// sends (slack-go reconnects after 30 s without one), chat.update,
// reactions.remove, conversations.replies, the file upload methods,
// private file downloads, and a record of every call the bot made.
//
// slacktest's own Socket Mode endpoint (/ws, where frames are pushed and
// acknowledgements read), auth.test and apps.connections.open's shape stay
// in use: the bot's socket goes through a relay here that adds the pings.
// chat.postMessage is replaced: slacktest answers every post within one
// second with the same ts, so edits could not tell two messages apart.
package slackpeer

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack/slacktest"

	"github.com/nanobot-durable/nanobot/channels/peerkit"
)

// BotUserID is the bot's user id: what slacktest's auth.test answers.
const BotUserID = "W012A3CDE"

// Message is a message the bot posted or an edit it made.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string
	Text     string
	Blocks   string // the blocks as JSON ("" when none were sent)
}

// Reaction is a reactions.add or reactions.remove call.
type Reaction struct {
	Op      string // "add" | "remove"
	Name    string
	Channel string
	TS      string
}

// Upload is a file the bot uploaded.
type Upload struct {
	Name     string
	Content  string
	Channel  string
	ThreadTS string
}

// Peer is a running slacktest server with the additions above.
type Peer struct {
	t   testing.TB
	srv *slacktest.Server

	mu          sync.Mutex
	posts       []Message
	updates     []Message
	reactions   []Reaction
	acks        []string
	connections int
	sockets     []*botSocket // the bot's open Socket Mode connections, oldest first
	replies     map[string][]map[string]any
	files       map[string]string
	uploads     map[string]*Upload
	done        []Upload
	ping        time.Duration
	seq         int
	channels    []map[string]any
	users       []map[string]any
}

// New starts the server on 127.0.0.1; it stops when the test ends.
func New(t testing.TB) *Peer {
	t.Helper()
	p := &Peer{t: t, replies: map[string][]map[string]any{}, files: map[string]string{},
		uploads: map[string]*Upload{}, ping: time.Second}
	p.srv = slacktest.NewTestServer(func(c slacktest.Customize) {
		c.Handle("/apps.connections.open", p.connectionsOpen)
		c.Handle("/peer-socket", p.relay)
		c.Handle("/chat.postMessage", p.chatPost)
		c.Handle("/chat.update", p.chatUpdate)
		c.Handle("/reactions.add", p.reaction("add"))
		c.Handle("/reactions.remove", p.reaction("remove"))
		c.Handle("/conversations.replies", p.conversationsReplies)
		c.Handle("/files.getUploadURLExternal", p.uploadURL)
		c.Handle("/peer-upload/", p.uploadContent)
		c.Handle("/files.completeUploadExternal", p.completeUpload)
		c.Handle("/peer-files/", p.download)
		c.Handle("/conversations.open", p.conversationsOpen)
		c.Handle("/conversations.list", p.conversationsList)
		c.Handle("/users.list", p.usersList)
	})
	p.srv.Start()
	go p.readAcks()
	t.Cleanup(p.srv.Stop)
	return p
}

// APIURL is the Web API base to configure the bot with (channels.slack.apiBase).
func (p *Peer) APIURL() string { return p.srv.GetAPIURL() }

// Connections counts the Socket Mode connections the bot opened.
func (p *Peer) Connections() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.connections
}

// helloFrame is Socket Mode's hello, as Slack sends it on connect.
const helloFrame = `{"type":"hello","num_connections":1,"debug_info":{"host":"slackpeer"},"connection_info":{"app_id":"A0PEER"}}`

// Hello sends Socket Mode's hello frame, as Slack does on connect.
func (p *Peer) Hello() { p.srv.SendToWebsocket(helloFrame) }

// HelloTo sends the hello frame on the bot's i-th open connection (0 the
// oldest): with several connections, Hello reaches only one of them.
func (p *Peer) HelloTo(i int) { p.sendTo(i, helloFrame) }

// Push sends one Events API envelope with this event to the bot and waits
// for the bot to acknowledge it (slacktest does not keep the order of
// frames pushed at once). A redelivery by Slack has the same eventID, a new
// envelope id and retry > 0.
func (p *Peer) Push(envelopeID, eventID string, retry int, ev map[string]any) {
	p.PushAcked(envelopeID, p.envelope(envelopeID, eventID, retry, ev))
}

// PushTo is Push on the bot's i-th open connection (0 the oldest), as
// Slack picks one of an app's connections for each envelope: a retry may
// reach another connection (another gateway) than the first delivery.
func (p *Peer) PushTo(i int, envelopeID, eventID string, retry int, ev map[string]any) {
	p.t.Helper()
	frame := p.envelope(envelopeID, eventID, retry, ev)
	p.awaitAck(envelopeID, func() { p.sendTo(i, frame) })
}

// envelope is an Events API envelope carrying ev.
func (p *Peer) envelope(envelopeID, eventID string, retry int, ev map[string]any) string {
	env := map[string]any{
		"type": "events_api", "envelope_id": envelopeID, "accepts_response_payload": false,
		"retry_attempt": retry, "retry_reason": map[bool]string{true: "timeout"}[retry > 0],
		"payload": map[string]any{
			"type": "event_callback", "team_id": "T024BE7LD", "api_app_id": "A0PEER",
			"event_id": eventID, "event_time": time.Now().Unix(), "event": ev,
		},
	}
	data, err := json.Marshal(env)
	if err != nil {
		p.t.Fatalf("slackpeer: %v", err)
	}
	return string(data)
}

// PushAcked sends a frame as is (a malformed envelope, say) and waits for
// the bot to acknowledge envelopeID once more.
func (p *Peer) PushAcked(envelopeID, frame string) {
	p.t.Helper()
	p.awaitAck(envelopeID, func() { p.srv.SendToWebsocket(frame) })
}

// awaitAck runs send and waits for the bot to acknowledge envelopeID once more.
func (p *Peer) awaitAck(envelopeID string, send func()) {
	p.t.Helper()
	before := p.ackCount(envelopeID)
	send()
	deadline := time.Now().Add(10 * time.Second)
	for p.ackCount(envelopeID) == before {
		if time.Now().After(deadline) {
			p.t.Fatalf("slackpeer: the bot did not acknowledge envelope %s", envelopeID)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (p *Peer) ackCount(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, a := range p.acks {
		if a == id {
			n++
		}
	}
	return n
}

// AppMention is an app_mention event in a channel.
func AppMention(channel, user, ts, threadTS, text string) map[string]any {
	ev := map[string]any{"type": "app_mention", "channel": channel, "user": user, "ts": ts, "event_ts": ts, "text": text}
	if threadTS != "" {
		ev["thread_ts"] = threadTS
	}
	return ev
}

// Message is a message event; channelType is "im", "channel", "group" or "mpim".
func MessageEvent(channel, channelType, user, ts, threadTS, text string) map[string]any {
	ev := map[string]any{"type": "message", "channel": channel, "channel_type": channelType, "user": user,
		"ts": ts, "event_ts": ts, "text": text, "client_msg_id": "cm-" + ts}
	if threadTS != "" {
		ev["thread_ts"] = threadTS
	}
	return ev
}

// Posts are the messages the bot posted (chat.postMessage), in order.
func (p *Peer) Posts() []Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Message(nil), p.posts...)
}

// Updates are the edits the bot made (chat.update), in order.
func (p *Peer) Updates() []Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Message(nil), p.updates...)
}

// Reactions are the reaction calls the bot made, in order.
func (p *Peer) Reactions() []Reaction {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Reaction(nil), p.reactions...)
}

// Acks are the envelope ids the bot acknowledged, in order.
func (p *Peer) Acks() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.acks...)
}

// Uploads are the files the bot uploaded and shared.
func (p *Peer) Uploads() []Upload {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Upload(nil), p.done...)
}

// Shown is what the bot's message with this ts says now: its last edit, or as posted.
func (p *Peer) Shown(channel, ts string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.updates) - 1; i >= 0; i-- {
		if u := p.updates[i]; u.Channel == channel && u.TS == ts {
			return u.Text, true
		}
	}
	for _, m := range p.posts {
		if m.Channel == channel && m.TS == ts {
			return m.Text, true
		}
	}
	return "", false
}

// SetReplies makes conversations.replies answer these messages for a thread.
func (p *Peer) SetReplies(channel, threadTS string, msgs ...map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.replies[channel+"/"+threadTS] = msgs
}

// ServeFile serves a private file; it returns its url_private_download.
func (p *Peer) ServeFile(name, content string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.files[name] = content
	return p.APIURL() + "peer-files/" + url.PathEscape(name)
}

// AddChannel makes conversations.list show a channel.
func (p *Peer) AddChannel(id, name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.channels = append(p.channels, map[string]any{"id": id, "name": name, "is_channel": true})
}

// AddUser makes users.list show a user; conversations.open opens DM "D"+id for anyone.
func (p *Peer) AddUser(id, name, displayName string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.users = append(p.users, map[string]any{"id": id, "name": name, "profile": map[string]any{"display_name": displayName}})
}

func (p *Peer) conversationsOpen(w http.ResponseWriter, r *http.Request) {
	users := form(r).Get("users")
	if users == "" {
		writeJSON(w, map[string]any{"ok": false, "error": "users_list_not_supplied"})
		return
	}
	writeJSON(w, map[string]any{"ok": true, "channel": map[string]any{"id": "D" + strings.Split(users, ",")[0]}})
}

func (p *Peer) conversationsList(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	writeJSON(w, map[string]any{"ok": true, "channels": p.channels, "response_metadata": map[string]any{"next_cursor": ""}})
}

func (p *Peer) usersList(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	writeJSON(w, map[string]any{"ok": true, "members": p.users, "response_metadata": map[string]any{"next_cursor": ""}})
}

// readAcks drains slacktest's feed of what the bot sent on its socket
// (slacktest blocks its socket until someone does) and keeps the acks.
func (p *Peer) readAcks() {
	for frame := range p.srv.SeenFeed {
		var ack struct {
			EnvelopeID string `json:"envelope_id"`
		}
		if json.Unmarshal([]byte(frame), &ack) == nil && ack.EnvelopeID != "" {
			p.mu.Lock()
			p.acks = append(p.acks, ack.EnvelopeID)
			p.mu.Unlock()
		}
	}
}

func (p *Peer) connectionsOpen(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]any{"ok": true, "url": "ws://" + r.Host + "/peer-socket"})
}

// botSocket is one of the bot's Socket Mode connections; frames reach it
// from slacktest and from sendTo, one writer at a time.
type botSocket struct {
	ws *websocket.Conn
	mu sync.Mutex
}

func (s *botSocket) write(kind int, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ws.WriteMessage(kind, data)
}

// sendTo writes a frame on the bot's i-th open connection (0 the oldest).
func (p *Peer) sendTo(i int, frame string) {
	p.t.Helper()
	p.mu.Lock()
	var sock *botSocket
	if i >= 0 && i < len(p.sockets) {
		sock = p.sockets[i]
	}
	open := len(p.sockets)
	p.mu.Unlock()
	if sock == nil {
		p.t.Fatalf("slackpeer: no connection %d (the bot has %d open)", i, open)
	}
	if err := sock.write(websocket.TextMessage, []byte(frame)); err != nil {
		p.t.Fatalf("slackpeer: write to connection %d: %v", i, err)
	}
}

func (p *Peer) dropSocket(sock *botSocket) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, s := range p.sockets {
		if s == sock {
			p.sockets = append(p.sockets[:i], p.sockets[i+1:]...)
			return
		}
	}
}

// relay joins the bot's socket to slacktest's /ws, pings the bot as
// Slack does, and records the messages slacktest echoes for each post.
func (p *Peer) relay(w http.ResponseWriter, r *http.Request) {
	bot, err := peerkit.UpgradeConn(w, r)
	if err != nil {
		return
	}
	defer bot.Close()
	inner, _, err := websocket.DefaultDialer.Dial("ws://"+r.Host+"/ws", nil)
	if err != nil {
		p.t.Logf("slackpeer: dial slacktest: %v", err)
		return
	}
	defer inner.Close()
	sock := &botSocket{ws: bot}
	p.mu.Lock()
	p.connections++
	p.sockets = append(p.sockets, sock)
	p.mu.Unlock()
	defer p.dropSocket(sock)

	done := make(chan struct{})
	var once sync.Once
	stop := func() { once.Do(func() { close(done) }) }
	go func() { // slacktest → bot
		defer stop()
		for {
			kind, data, err := inner.ReadMessage()
			if err != nil {
				return
			}
			if err := sock.write(kind, data); err != nil {
				return
			}
		}
	}()
	go func() { // bot → slacktest
		defer stop()
		for {
			kind, data, err := bot.ReadMessage()
			if err != nil {
				return
			}
			if err := inner.WriteMessage(kind, data); err != nil {
				return
			}
		}
	}()
	tick := time.NewTicker(p.ping)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			if err := bot.WriteControl(websocket.PingMessage, []byte("slackpeer"), time.Now().Add(time.Second)); err != nil {
				return
			}
		}
	}
}

// chatPost records a post and answers with a ts unique in its channel, as Slack does.
func (p *Peer) chatPost(w http.ResponseWriter, r *http.Request) {
	v := form(r)
	if v.Get("channel") == "" || (v.Get("text") == "" && v.Get("blocks") == "") {
		writeJSON(w, map[string]any{"ok": false, "error": map[bool]string{true: "channel_not_found", false: "no_text"}[v.Get("channel") == ""]})
		return
	}
	p.mu.Lock()
	p.seq++
	m := Message{Channel: v.Get("channel"), TS: fmt.Sprintf("%d.%06d", time.Now().Unix(), p.seq), ThreadTS: v.Get("thread_ts"), Text: v.Get("text"), Blocks: v.Get("blocks")}
	p.posts = append(p.posts, m)
	p.mu.Unlock()
	writeJSON(w, map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS,
		"message": map[string]any{"type": "message", "user": BotUserID, "text": m.Text, "ts": m.TS, "thread_ts": m.ThreadTS}})
}

func (p *Peer) chatUpdate(w http.ResponseWriter, r *http.Request) {
	v := form(r)
	p.mu.Lock()
	p.updates = append(p.updates, Message{Channel: v.Get("channel"), TS: v.Get("ts"), Text: v.Get("text"), Blocks: v.Get("blocks")})
	p.mu.Unlock()
	writeJSON(w, map[string]any{"ok": true, "channel": v.Get("channel"), "ts": v.Get("ts"), "text": v.Get("text")})
}

func (p *Peer) reaction(op string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v := form(r)
		p.mu.Lock()
		p.reactions = append(p.reactions, Reaction{Op: op, Name: v.Get("name"), Channel: v.Get("channel"), TS: v.Get("timestamp")})
		p.mu.Unlock()
		writeJSON(w, map[string]any{"ok": true})
	}
}

func (p *Peer) conversationsReplies(w http.ResponseWriter, r *http.Request) {
	v := form(r)
	p.mu.Lock()
	msgs, ok := p.replies[v.Get("channel")+"/"+v.Get("ts")]
	p.mu.Unlock()
	if !ok {
		writeJSON(w, map[string]any{"ok": false, "error": "thread_not_found"})
		return
	}
	writeJSON(w, map[string]any{"ok": true, "messages": msgs, "has_more": false})
}

func (p *Peer) uploadURL(w http.ResponseWriter, r *http.Request) {
	v := form(r)
	p.mu.Lock()
	id := fmt.Sprintf("F%06d", len(p.uploads)+1)
	p.uploads[id] = &Upload{Name: v.Get("filename")}
	p.mu.Unlock()
	writeJSON(w, map[string]any{"ok": true, "upload_url": p.APIURL() + "peer-upload/" + id, "file_id": id})
}

func (p *Peer) uploadContent(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/peer-upload/")
	var content string
	if mr, err := r.MultipartReader(); err == nil { // slack-go sends the file as a multipart form
		for part, err := mr.NextPart(); err == nil; part, err = mr.NextPart() {
			if part.FormName() == "file" {
				b, _ := io.ReadAll(part)
				content += string(b)
			}
		}
	} else {
		body, _ := io.ReadAll(r.Body)
		content = string(body)
	}
	p.mu.Lock()
	if u, ok := p.uploads[id]; ok {
		u.Content = content
	}
	p.mu.Unlock()
	_, _ = w.Write([]byte("OK"))
}

func (p *Peer) completeUpload(w http.ResponseWriter, r *http.Request) {
	v := form(r)
	var files []struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal([]byte(v.Get("files")), &files)
	p.mu.Lock()
	for _, f := range files {
		if u, ok := p.uploads[f.ID]; ok {
			u.Channel, u.ThreadTS = v.Get("channel_id"), v.Get("thread_ts")
			p.done = append(p.done, *u)
		}
	}
	p.mu.Unlock()
	writeJSON(w, map[string]any{"ok": true, "files": files})
}

func (p *Peer) download(w http.ResponseWriter, r *http.Request) {
	name, _ := url.PathUnescape(strings.TrimPrefix(r.URL.Path, "/peer-files/"))
	if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
		w.Header().Set("Content-Type", "text/html") // what Slack answers without a token
		_, _ = w.Write([]byte("<html>sign in</html>"))
		return
	}
	p.mu.Lock()
	content, ok := p.files[name]
	p.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write([]byte(content))
}

func form(r *http.Request) url.Values {
	_ = r.ParseForm()
	return r.Form
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// Offer sends one Events API envelope on the bot's newest connection and
// reports whether the bot acknowledged it within wait. Unlike Push it never
// fails the test: a soak's gateway may be down, and the caller then offers
// the event again with a new envelope and retry+1, as Slack redelivers.
func (p *Peer) Offer(envelopeID, eventID string, retry int, ev map[string]any, wait time.Duration) bool {
	if !p.writeNewest(p.envelope(envelopeID, eventID, retry, ev)) {
		return false
	}
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if p.ackCount(envelopeID) > 0 {
			return true
		}
	}
	return false
}

// GreetNewest sends the hello frame on the bot's newest connection, false
// when it has none (a reconnecting bot gets its hello as Slack sends it).
func (p *Peer) GreetNewest() bool { return p.writeNewest(helloFrame) }

func (p *Peer) writeNewest(frame string) bool {
	p.mu.Lock()
	var sock *botSocket
	if n := len(p.sockets); n > 0 {
		sock = p.sockets[n-1]
	}
	p.mu.Unlock()
	return sock != nil && sock.write(websocket.TextMessage, []byte(frame)) == nil
}
