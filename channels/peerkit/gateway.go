package peerkit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// The opcodes of the Discord-style bot gateway, which QQ's speaks too.
const (
	OpDispatch       = 0
	OpHeartbeat      = 1
	OpIdentify       = 2
	OpResume         = 6
	OpReconnect      = 7
	OpInvalidSession = 9
	OpHello          = 10
	OpHeartbeatACK   = 11
)

// Frame is one gateway payload the bot sent.
type Frame struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
}

// dispatched is an event kept for replay on RESUME.
type dispatched struct {
	seq   int64
	data  []byte // the whole frame
	event string
	d     json.RawMessage
}

// session is the bot's gateway session: it outlives a connection, so a
// RESUME on a new connection gets what was dispatched in between.
type session struct {
	id      string
	seq     int64
	history []dispatched
}

// Gateway is the fake side of a Discord-style gateway: HELLO, a session
// opened by IDENTIFY, dispatches numbered and kept, RESUME replaying what
// the bot missed, op 7 and op 9, close codes. The peer decides what
// IDENTIFY and RESUME need (the token) and what READY says.
type Gateway struct {
	t    testing.TB
	name string
	// frame builds a dispatch frame (QQ adds an id).
	frame func(seq int64, event string, d []byte) []byte

	mu    sync.Mutex
	n     int
	sess  *session
	conn  *Socket
	noACK bool
}

// NewGateway is the gateway of the peer named name; frame builds a
// dispatch frame from its parts (nil: {"op":0,"s","t","d"}).
func NewGateway(t testing.TB, name string, frame func(seq int64, event string, d []byte) []byte) *Gateway {
	if frame == nil {
		frame = func(seq int64, event string, d []byte) []byte {
			return fmt.Appendf(nil, `{"op":0,"s":%d,"t":%q,"d":%s}`, seq, event, d)
		}
	}
	return &Gateway{t: t, name: name, frame: frame}
}

// Serve takes a bot's connection: HELLO with the heartbeat interval, then
// each frame to handle until the socket ends or handle says stop. A frame
// that is not JSON closes the socket with badFrame.
func (g *Gateway) Serve(w http.ResponseWriter, r *http.Request, heartbeat time.Duration, badFrame int, handle func(*Socket, Frame) bool) {
	s, err := Upgrade(w, r)
	if err != nil {
		return
	}
	defer s.Close(0, "")
	if s.Send(map[string]any{"op": OpHello, "d": map[string]any{"heartbeat_interval": heartbeat.Milliseconds()}}) != nil {
		return
	}
	for {
		var f Frame
		data, err := s.Read()
		if err != nil {
			g.detach(s)
			return
		}
		if json.Unmarshal(data, &f) != nil {
			s.Close(badFrame, "decode error")
			return
		}
		if !handle(s, f) {
			return
		}
	}
}

// ACK acknowledges a heartbeat (op 11), unless StopACKs holds them back.
func (g *Gateway) ACK(s *Socket) {
	g.mu.Lock()
	noACK := g.noACK
	g.mu.Unlock()
	if !noACK {
		_ = s.Send(map[string]any{"op": OpHeartbeatACK})
	}
}

// StopACKs makes the gateway leave heartbeats unacknowledged (a dead link).
func (g *Gateway) StopACKs(on bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.noACK = on
}

// Open starts a new session on s (a valid IDENTIFY) and returns its id;
// the peer then dispatches READY.
func (g *Gateway) Open(s *Socket) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n++
	g.sess = &session{id: fmt.Sprintf("peer-session-%d", g.n)}
	g.conn = s
	return g.sess.id
}

// Resume goes on with the session on s, replaying what came after seq;
// an unknown session (or !valid, a bad token) gets op 9. It reports
// whether the session resumed; the peer then dispatches RESUMED.
func (g *Gateway) Resume(s *Socket, sessionID string, seq int64, valid bool) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sess == nil || sessionID != g.sess.id || !valid {
		_ = s.Send(map[string]any{"op": OpInvalidSession, "d": false})
		return false
	}
	g.conn = s
	for _, h := range g.sess.history {
		if h.seq > seq {
			_ = s.SendText(h.data)
		}
	}
	return true
}

func (g *Gateway) detach(s *Socket) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.conn == s {
		g.conn = nil
	}
}

// Dispatch sends an event (op 0) to the bot: at once if it is connected,
// else on its RESUME. A json.RawMessage d goes as it is (malformed JSON,
// invalid UTF-8).
func (g *Gateway) Dispatch(event string, d any) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.dispatchLocked(event, d)
}

func (g *Gateway) dispatchLocked(event string, d any) {
	if g.sess == nil {
		g.t.Errorf("%s: %s dispatched before the bot identified", g.name, event)
		return
	}
	body, ok := d.(json.RawMessage)
	if !ok {
		var err error
		if body, err = json.Marshal(d); err != nil {
			g.t.Errorf("%s: %v", g.name, err)
			return
		}
	}
	g.sess.seq++
	// built by hand: json.Marshal would check (and so refuse) broken bytes
	data := g.frame(g.sess.seq, event, body)
	g.sess.history = append(g.sess.history, dispatched{seq: g.sess.seq, data: data, event: event, d: body})
	if g.conn != nil {
		_ = g.conn.SendText(data)
	}
}

// Redeliver dispatches again, under a new seq, the first event whose d
// match accepts; false when none was dispatched.
func (g *Gateway) Redeliver(match func(d json.RawMessage) bool) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sess == nil {
		return false
	}
	for _, h := range g.sess.history {
		if match(h.d) {
			g.dispatchLocked(h.event, h.d)
			return true
		}
	}
	return false
}

// DispatchRaw sends an event whose d is the bytes given, as they are
// (malformed JSON, invalid UTF-8).
func (g *Gateway) DispatchRaw(event string, d []byte) { g.Dispatch(event, json.RawMessage(d)) }

// Reconnect sends op 7: the bot is to reconnect and resume.
func (g *Gateway) Reconnect() { g.SendOp(OpReconnect, nil) }

// SendOp sends a frame of op with d to the connected bot (op 7: reconnect).
func (g *Gateway) SendOp(op int, d any) {
	g.mu.Lock()
	s := g.conn
	g.mu.Unlock()
	if s != nil {
		_ = s.Send(map[string]any{"op": op, "d": d})
	}
}

// CloseGateway closes the bot's connection with a close code; what is
// dispatched until it resumes is replayed then.
func (g *Gateway) CloseGateway(code int) {
	g.mu.Lock()
	s := g.conn
	g.conn = nil
	g.mu.Unlock()
	if s != nil {
		s.Close(code, "peer closed")
	}
}

// ForgetSession ends the session on the gateway's side: the next RESUME gets op 9.
func (g *Gateway) ForgetSession() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sess != nil {
		g.sess.id = "forgotten-" + g.sess.id
	}
}

// Connected tells whether the bot holds a live, identified connection.
func (g *Gateway) Connected() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.conn != nil
}
