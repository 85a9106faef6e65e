package qqpeer

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// The gateway's opcodes (QQ Bot API, "Opcode").
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

type frame struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
}

// session outlives a connection, so a RESUME gets what was dispatched in between.
type session struct {
	id      string
	seq     int64
	history []dispatch
}

type dispatch struct {
	seq   int64
	data  []byte
	event string
	d     json.RawMessage
}

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

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// gateway serves the bot's WebSocket: HELLO, then IDENTIFY → READY or
// RESUME → the missed dispatches → RESUMED; heartbeats are acknowledged.
func (p *Peer) gateway(w http.ResponseWriter, r *http.Request) {
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &conn{ws: ws}
	defer ws.Close()
	p.mu.Lock()
	p.stats.Connections++
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
			p.closeConn(c, 4001, "invalid opcode")
			return
		}
		switch f.Op {
		case opHeartbeat:
			p.beat(c, f.D)
		case opIdentify:
			if !p.identify(c, f.D) {
				return
			}
		case opResume:
			p.resume(c, f.D)
		}
	}
}

func (p *Peer) beat(c *conn, d json.RawMessage) {
	var seq *int64
	_ = json.Unmarshal(d, &seq)
	p.mu.Lock()
	p.stats.Heartbeats++
	s := int64(-1)
	if seq != nil {
		s = *seq
	}
	p.stats.HeartbeatSeqs = append(p.stats.HeartbeatSeqs, s)
	noACK := p.noACK
	p.mu.Unlock()
	if !noACK {
		ack, _ := json.Marshal(map[string]any{"op": opHeartbeatACK, "d": 0})
		_ = c.write(ack)
	}
}

func (p *Peer) identify(c *conn, d json.RawMessage) bool {
	var id struct {
		Token   string `json:"token"`
		Intents int    `json:"intents"`
		Shard   []int  `json:"shard"`
	}
	_ = json.Unmarshal(d, &id)
	p.mu.Lock()
	valid := p.validLocked(id.Token)
	p.mu.Unlock()
	if !valid {
		p.closeConn(c, 4004, "invalid token")
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Identifies++
	p.intents, p.shard = id.Intents, id.Shard
	p.sessionN++
	p.sess = &session{id: fmt.Sprintf("peer-session-%d", p.sessionN)}
	p.conn = c
	p.dispatchLocked("READY", map[string]any{"version": 1, "session_id": p.sess.id,
		"user": map[string]any{"id": BotID, "username": BotName, "bot": true}, "shard": []int{0, 1}})
	return true
}

// resume replays what the session missed after the bot's seq, then
// RESUMED; an unknown session gets op 9 (not resumable).
func (p *Peer) resume(c *conn, d json.RawMessage) {
	var rs struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int64  `json:"seq"`
	}
	_ = json.Unmarshal(d, &rs)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sess == nil || rs.SessionID != p.sess.id || !p.validLocked(rs.Token) {
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
	p.dispatchLocked("RESUMED", "")
}

func (p *Peer) detach(c *conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == c {
		p.conn = nil
	}
}

func (p *Peer) closeConn(c *conn, code int, text string) {
	c.mu.Lock()
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(time.Second))
	c.mu.Unlock()
	_ = c.ws.Close()
}

// Dispatch sends an event (op 0) to the bot: at once if it is connected,
// else on its RESUME.
func (p *Peer) Dispatch(event string, d any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dispatchLocked(event, d)
}

// DispatchRaw sends an event whose d is the bytes given, as they are.
func (p *Peer) DispatchRaw(event string, d []byte) { p.Dispatch(event, json.RawMessage(d)) }

func (p *Peer) dispatchLocked(event string, d any) {
	if p.sess == nil {
		p.t.Errorf("qqpeer: %s dispatched before the bot identified", event)
		return
	}
	body, ok := d.(json.RawMessage)
	if !ok {
		var err error
		if body, err = json.Marshal(d); err != nil {
			p.t.Errorf("qqpeer: %v", err)
			return
		}
	}
	p.sess.seq++
	// built by hand: json.Marshal would check (and so refuse) broken bytes
	data := fmt.Appendf(nil, `{"op":0,"s":%d,"t":%q,"id":"%s:%d","d":%s}`, p.sess.seq, event, event, p.sess.seq, body)
	p.sess.history = append(p.sess.history, dispatch{seq: p.sess.seq, data: data, event: event, d: body})
	if p.conn != nil {
		_ = p.conn.write(data)
	}
}

// Redeliver dispatches the event that carried message id again, under a
// new seq, as QQ does with an event it is not sure reached the bot.
func (p *Peer) Redeliver(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sess != nil {
		for _, h := range p.sess.history {
			var m struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(h.d, &m) == nil && m.ID == id {
				p.dispatchLocked(h.event, h.d)
				return
			}
		}
	}
	p.t.Errorf("qqpeer: no message %s was dispatched to redeliver", id)
}

// CloseGateway closes the bot's connection with a close code; what is
// dispatched until it resumes is replayed then.
func (p *Peer) CloseGateway(code int) {
	p.mu.Lock()
	c := p.conn
	p.conn = nil
	p.mu.Unlock()
	if c != nil {
		p.closeConn(c, code, "peer closed")
	}
}

// ForgetSession ends the session on the gateway's side: the next RESUME gets op 9.
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
		f, _ := json.Marshal(map[string]any{"op": opReconnect})
		_ = c.write(f)
	}
}

// Connected tells whether the bot holds a live, identified connection.
func (p *Peer) Connected() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conn != nil
}
