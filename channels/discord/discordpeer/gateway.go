package discordpeer

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// The gateway's opcodes (Discord's documentation, "Gateway Opcodes").
const (
	opDispatch       = 0
	opHeartbeat      = 1
	opIdentify       = 2
	opResume         = 6
	opReconnect      = 7
	opInvalidSession = 9
	opHello          = 10
	opHeartbeatACK   = 11
)

// frame is one gateway payload.
type frame struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  *int64          `json:"s,omitempty"`
	T  string          `json:"t,omitempty"`
}

// dispatch is a sent event kept for replay on RESUME.
type dispatch struct {
	seq  int64
	data []byte // the whole frame
}

// session is the bot's gateway session: it outlives a connection, so a
// RESUME on a new connection gets what was dispatched in between.
type session struct {
	id      string
	seq     int64
	history []dispatch
}

// conn is one WebSocket connection of the bot.
type conn struct {
	ws *websocket.Conn
	mu sync.Mutex // one writer at a time
}

func (c *conn) write(data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteMessage(websocket.TextMessage, data)
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// gateway serves the bot's WebSocket: HELLO, then IDENTIFY → READY (and
// GUILD_CREATE) or RESUME → the missed dispatches → RESUMED; heartbeats
// are acknowledged.
func (p *Peer) gateway(w http.ResponseWriter, r *http.Request) {
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &conn{ws: ws}
	defer ws.Close()
	p.mu.Lock()
	p.stats.Connections++
	if strings.HasPrefix(r.URL.Path, "/resume") {
		p.stats.ResumeURLConnections++
	}
	interval := p.heartbeat
	p.mu.Unlock()
	hello, _ := json.Marshal(map[string]any{"op": opHello, "d": map[string]any{"heartbeat_interval": interval.Milliseconds()}})
	if c.write(hello) != nil {
		return
	}
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			p.detach(c)
			return
		}
		var f frame
		if json.Unmarshal(data, &f) != nil {
			_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4002, "decode error"), time.Now().Add(time.Second))
			return
		}
		switch f.Op {
		case opHeartbeat:
			p.mu.Lock()
			p.stats.Heartbeats++
			p.mu.Unlock()
			ack, _ := json.Marshal(map[string]any{"op": opHeartbeatACK})
			_ = c.write(ack)
		case opIdentify:
			if !p.identify(c, f.D) {
				return
			}
		case opResume:
			p.resume(c, f.D)
		}
	}
}

func (p *Peer) identify(c *conn, d json.RawMessage) bool {
	var id struct {
		Token   string `json:"token"`
		Intents int    `json:"intents"`
	}
	_ = json.Unmarshal(d, &id)
	if id.Token != "Bot "+Token {
		_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4004, "Authentication failed."), time.Now().Add(time.Second))
		return false
	}
	p.mu.Lock()
	p.stats.Identifies++
	p.intents = id.Intents
	p.sessionN++
	p.sess = &session{id: fmt.Sprintf("peer-session-%d", p.sessionN)}
	p.conn = c
	guilds := p.guildsLocked()
	var unavailable []map[string]any
	for _, g := range guilds {
		unavailable = append(unavailable, map[string]any{"id": g["id"], "unavailable": true})
	}
	p.dispatchLocked("READY", map[string]any{
		"v": 9, "user": p.botUser(), "guilds": unavailable, "session_id": p.sess.id,
		"resume_gateway_url": p.wsURL("/resume-gateway"), "shard": []int{0, 1},
		"application": map[string]any{"id": BotID, "flags": 0},
	})
	for _, g := range guilds {
		p.dispatchLocked("GUILD_CREATE", g)
	}
	p.mu.Unlock()
	return true
}

// resume replays what the session missed since the bot's sequence, then
// RESUMED; an unknown session gets INVALID_SESSION (not resumable).
func (p *Peer) resume(c *conn, d json.RawMessage) {
	var rs struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int64  `json:"seq"`
	}
	_ = json.Unmarshal(d, &rs)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sess == nil || rs.SessionID != p.sess.id || rs.Token != "Bot "+Token {
		p.stats.InvalidSessions++
		f, _ := json.Marshal(map[string]any{"op": opInvalidSession, "d": false})
		_ = c.write(f)
		return
	}
	p.stats.Resumes++
	p.conn = c
	for _, h := range p.sess.history {
		if h.seq > rs.Seq {
			_ = c.write(h.data)
		}
	}
	p.dispatchLocked("RESUMED", map[string]any{})
}

// detach forgets a connection that closed; the session stays resumable.
func (p *Peer) detach(c *conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == c {
		p.conn = nil
	}
}

// Dispatch sends an event (op 0) to the bot: at once if it is connected,
// else on its RESUME.
func (p *Peer) Dispatch(event string, d any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dispatchLocked(event, d)
}

// DispatchRaw sends an event whose d is the bytes given, as they are
// (malformed JSON, invalid UTF-8).
func (p *Peer) DispatchRaw(event string, d []byte) {
	p.Dispatch(event, json.RawMessage(d))
}

func (p *Peer) dispatchLocked(event string, d any) {
	if p.sess == nil {
		p.t.Errorf("discordpeer: %s dispatched before the bot identified", event)
		return
	}
	var data []byte
	if raw, ok := d.(json.RawMessage); ok {
		p.sess.seq++
		// built by hand: json.Marshal would check (and so refuse) broken bytes
		data = fmt.Appendf(nil, `{"op":0,"s":%d,"t":%q,"d":%s}`, p.sess.seq, event, raw)
	} else {
		body, err := json.Marshal(d)
		if err != nil {
			p.t.Errorf("discordpeer: %v", err)
			return
		}
		p.sess.seq++
		data = fmt.Appendf(nil, `{"op":0,"s":%d,"t":%q,"d":%s}`, p.sess.seq, event, body)
	}
	p.sess.history = append(p.sess.history, dispatch{seq: p.sess.seq, data: data})
	if p.conn != nil {
		_ = p.conn.write(data)
	}
}

// CloseGateway closes the bot's connection with a close code (4000,
// "unknown error", lets it resume); events dispatched until it resumes
// are replayed then.
func (p *Peer) CloseGateway(code int) {
	p.mu.Lock()
	c := p.conn
	p.conn = nil
	p.mu.Unlock()
	if c == nil {
		return
	}
	c.mu.Lock()
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, "peer closed"), time.Now().Add(time.Second))
	c.mu.Unlock()
	_ = c.ws.Close()
}

// ForgetSession ends the bot's session on the gateway's side: its next
// RESUME gets INVALID_SESSION.
func (p *Peer) ForgetSession() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sess != nil {
		p.sess.id = "forgotten-" + p.sess.id
	}
}

// Reconnect sends op 7: the bot is to reconnect and resume.
func (p *Peer) Reconnect() {
	p.mu.Lock()
	c := p.conn
	p.mu.Unlock()
	if c != nil {
		f, _ := json.Marshal(map[string]any{"op": opReconnect, "d": nil})
		_ = c.write(f)
	}
}

// Connected tells whether the bot holds a live, identified connection.
func (p *Peer) Connected() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conn != nil
}

func (p *Peer) wsURL(path string) string {
	return "ws" + strings.TrimPrefix(p.srv.URL, "http") + path
}
