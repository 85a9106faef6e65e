package dingtalkpeer

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/nanobot-durable/nanobot/channels/peerkit"
)

// The robot message topic, and the frame types (DingTalk's Stream mode).
const (
	TopicRobot = "/v1.0/im/bot/messages/get"
	System     = "SYSTEM"
	Callback   = "CALLBACK"
	Event      = "EVENT"
)

// conn is the bot's open stream socket.
type conn struct {
	ws *websocket.Conn
	mu sync.Mutex
}

func (c *conn) write(data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteMessage(websocket.TextMessage, data)
}

// open registers a connection: the app's credentials and subscriptions in,
// an endpoint and a one-time ticket out.
func (p *Peer) open(w http.ResponseWriter, r *http.Request) {
	if p.failed(w, r) {
		return
	}
	var req struct {
		ClientID      string              `json:"clientId"`
		ClientSecret  string              `json:"clientSecret"`
		Subscriptions []map[string]string `json:"subscriptions"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, 400, map[string]string{"code": "InvalidParameter", "message": err.Error()})
		return
	}
	if req.ClientID != ClientID || req.ClientSecret != ClientSecret {
		writeJSON(w, 401, map[string]string{"code": "Unauthorized", "message": "clientId or clientSecret is wrong"})
		return
	}
	ticket := p.id("ticket-")
	p.mu.Lock()
	p.stats.Opens++
	p.subs = req.Subscriptions
	p.tickets[ticket] = true
	p.mu.Unlock()
	writeJSON(w, 200, map[string]string{"endpoint": p.wsURL() + "/connect", "ticket": ticket})
}

// stream is the socket: a valid ticket once, then frames both ways.
func (p *Peer) stream(w http.ResponseWriter, r *http.Request) {
	ticket := r.URL.Query().Get("ticket")
	p.mu.Lock()
	ok := p.tickets[ticket]
	delete(p.tickets, ticket)
	p.mu.Unlock()
	if !ok {
		http.Error(w, "unknown ticket", http.StatusUnauthorized)
		return
	}
	ws, err := peerkit.UpgradeConn(w, r)
	if err != nil {
		return
	}
	c := &conn{ws: ws}
	defer ws.Close()
	p.mu.Lock()
	if p.conn != nil {
		_ = p.conn.ws.Close()
	}
	p.conn = c
	p.stats.Connections++
	pending := p.pending
	p.pending = nil
	p.mu.Unlock()
	for _, f := range pending {
		_ = c.write(f)
	}
	for {
		_, raw, err := ws.ReadMessage()
		if err != nil {
			break
		}
		var resp Response
		if json.Unmarshal(raw, &resp) == nil {
			p.mu.Lock()
			p.responses = append(p.responses, resp)
			p.mu.Unlock()
		}
	}
	p.mu.Lock()
	if p.conn == c {
		p.conn = nil
	}
	p.mu.Unlock()
}

// Connected tells whether the bot holds a stream socket.
func (p *Peer) Connected() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conn != nil
}

// Push sends one frame of type and topic with data; sent while no socket
// is open, it waits for the next one (DingTalk pushes it again). It
// returns the frame's messageId.
func (p *Peer) Push(kind, topic, data string) string {
	id := p.id("frame-")
	f, _ := json.Marshal(map[string]any{
		"specVersion": "1.0", "type": kind, "data": data,
		"headers": map[string]string{"appId": "peer-app", "connectionId": "peer-conn", "contentType": "application/json",
			"messageId": id, "time": strconv.FormatInt(time.Now().UnixMilli(), 10), "topic": topic},
	})
	p.PushRaw(f)
	return id
}

// PushRaw sends bytes as a frame, as they are.
func (p *Peer) PushRaw(f []byte) {
	p.mu.Lock()
	c := p.conn
	if c == nil {
		p.pending = append(p.pending, f)
	}
	p.mu.Unlock()
	if c != nil && c.write(f) != nil {
		p.mu.Lock()
		p.pending = append(p.pending, f)
		p.mu.Unlock()
	}
}

// Ping sends a SYSTEM ping carrying data and returns its messageId.
func (p *Peer) Ping(data string) string { return p.Push(System, "ping", data) }

// AskReconnect sends SYSTEM disconnect: the bot is to connect anew.
func (p *Peer) AskReconnect() { p.Push(System, "disconnect", `{"reason":"server restart"}`) }

// Drop closes the socket under the bot.
func (p *Peer) Drop() {
	p.mu.Lock()
	c := p.conn
	p.conn = nil
	p.mu.Unlock()
	if c != nil {
		_ = c.ws.Close()
	}
}

// Responses are the frames the bot wrote, in order.
func (p *Peer) Responses() []Response {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Response(nil), p.responses...)
}

// Answered is the bot's response to the frame messageID, if it wrote one.
func (p *Peer) Answered(messageID string) (Response, bool) {
	for _, r := range p.Responses() {
		if r.Headers["messageId"] == messageID {
			return r, true
		}
	}
	return Response{}, false
}
