package mattermostpeer

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/nanobot-durable/nanobot/channels/peerkit"
)

// wsState is the event stream: the open connection, and each connection
// id's numbered events, kept after a drop so a reconnect can resume.
type wsState struct {
	wmu         sync.Mutex // one writer at a time, seq in write order
	conn        *peerkit.Socket
	current     *session
	sessions    map[string]*session
	connections int
	resumes     int
}

type session struct {
	id     string
	events [][]byte // by seq
}

// websocket is GET /api/v4/websocket: authenticated by the Authorization
// header or, after the upgrade, an authentication_challenge; then the
// connection named by connection_id is resumed from sequence_number, or a
// new one begins with hello.
func (p *Peer) websocket(w http.ResponseWriter, r *http.Request) {
	conn, err := peerkit.Upgrade(w, r)
	if err != nil {
		return
	}
	if (r.Header.Get("Authorization") != "Bearer "+Token || p.refuse.Load()) && !p.challenge(conn) {
		conn.Close(1008, "not authenticated")
		return
	}
	from, _ := strconv.Atoi(r.URL.Query().Get("sequence_number"))
	p.ws.wmu.Lock()
	p.mu.Lock()
	sess := p.ws.sessions[r.URL.Query().Get("connection_id")]
	resumed := sess != nil && from <= len(sess.events)
	if !resumed {
		sess = &session{id: p.idLocked("conn")}
		p.ws.sessions[sess.id] = sess
		from = 0
	} else {
		p.ws.resumes++
	}
	if p.ws.conn != nil {
		p.ws.conn.Close(1000, "")
	}
	p.ws.conn, p.ws.current = conn, sess
	p.ws.connections++
	missed := append([][]byte(nil), sess.events[from:]...)
	p.mu.Unlock()
	for _, ev := range missed {
		_ = conn.Send(json.RawMessage(ev))
	}
	p.ws.wmu.Unlock()
	p.broadcast("hello", map[string]any{"connection_id": sess.id, "server_version": "10.5.0.peer"}, "")
	p.readLoop(conn)
}

// challenge waits for {"seq":1,"action":"authentication_challenge","data":{"token":…}}.
func (p *Peer) challenge(conn *peerkit.Socket) bool {
	var msg struct {
		Seq    int               `json:"seq"`
		Action string            `json:"action"`
		Data   map[string]string `json:"data"`
	}
	if err := conn.ReadJSON(&msg); err != nil {
		return false
	}
	if msg.Action != "authentication_challenge" || msg.Data["token"] != Token || p.refuse.Load() {
		_ = conn.Send(map[string]any{"status": "FAIL", "seq_reply": msg.Seq,
			"error": map[string]any{"id": "api.web_socket_router.not_authenticated.app_error", "message": "Not authenticated."}})
		return false
	}
	return conn.Send(map[string]any{"status": "OK", "seq_reply": msg.Seq}) == nil
}

// readLoop answers the client's actions (ping) until the connection ends.
func (p *Peer) readLoop(conn *peerkit.Socket) {
	defer func() {
		p.mu.Lock()
		if p.ws.conn == conn {
			p.ws.conn = nil
		}
		p.mu.Unlock()
		conn.Close(0, "")
	}()
	for {
		var msg struct {
			Seq    int    `json:"seq"`
			Action string `json:"action"`
		}
		if err := conn.ReadJSON(&msg); err != nil {
			return
		}
		reply := map[string]any{"status": "OK", "seq_reply": msg.Seq}
		if msg.Action == "ping" {
			reply["data"] = map[string]any{"text": "pong", "version": "10.5.0.peer"}
		}
		if conn.Send(reply) != nil {
			return
		}
	}
}

// broadcast numbers an event in the current connection and sends it; with
// the socket down it waits in the connection's buffer for a resume.
func (p *Peer) broadcast(event string, data map[string]any, channelID string) {
	p.ws.wmu.Lock()
	defer p.ws.wmu.Unlock()
	p.mu.Lock()
	sess, conn := p.ws.current, p.ws.conn
	if sess == nil {
		p.mu.Unlock()
		return // nobody ever connected
	}
	raw, _ := json.Marshal(map[string]any{"event": event, "data": data, "seq": len(sess.events),
		"broadcast": map[string]any{"omit_users": nil, "user_id": "", "channel_id": channelID, "team_id": ""}})
	sess.events = append(sess.events, raw)
	p.mu.Unlock()
	if conn != nil {
		_ = conn.Send(json.RawMessage(raw))
	}
}

// Drop cuts the socket without a close frame, as a network failure does;
// the connection's events wait for a resume.
func (p *Peer) Drop() {
	p.ws.wmu.Lock()
	defer p.ws.wmu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ws.conn != nil {
		p.ws.conn.Close(0, "")
		p.ws.conn = nil
	}
}

// Forget drops every connection's buffer, as a restarted server does: the
// next connection starts anew whatever it names.
func (p *Peer) Forget() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ws.sessions = map[string]*session{}
}

// RefuseSocket makes the socket refuse the token from now on (a revoked bot token).
func (p *Peer) RefuseSocket() { p.refuse.Store(true) }

// Connected tells whether a connection is open and authenticated.
func (p *Peer) Connected() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ws.conn != nil
}

// Connections counts the authenticated connections; Resumes those that
// resumed an earlier connection's events.
func (p *Peer) Connections() (all, resumed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ws.connections, p.ws.resumes
}
