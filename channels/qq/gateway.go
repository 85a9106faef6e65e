package qq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// Timing of the gateway connection.
const (
	helloTimeout = 30 * time.Second
	writeTimeout = 10 * time.Second
	// maxBackoff caps the wait between failed connection attempts.
	maxBackoff = time.Minute
	// bannedWait is the wait after QQ says the bot is offline or banned.
	bannedWait = 5 * time.Minute
	// stableAfter is how long a session must have run to be reconnected without a wait.
	stableAfter = 10 * time.Second
)

// gatewayState is what outlives one connection: the session to resume.
type gatewayState struct {
	sessionID string
	seq       atomic.Int64 // the last dispatch's s
}

// event is one message dispatch, handled in the gateway's order.
type event struct {
	kind string
	seq  int64
	data json.RawMessage
}

// runGateway connects, and reconnects with backoff after every drop,
// resuming the session when it can, until ctx ends.
func (c *Channel) runGateway(ctx context.Context) {
	events := make(chan event, 256)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); c.handleQueue(ctx, events) }()
	defer wg.Wait()
	st := &gatewayState{}
	delay := time.Second
	for {
		began := time.Now()
		healthy, err := c.connection(ctx, st, events)
		c.up.Store(false)
		if ctx.Err() != nil {
			return
		}
		wait := delay
		switch {
		case errors.Is(err, errBanned):
			wait = bannedWait
			c.log.Error("qq gateway refused the bot", "error", err, "retry_in", wait)
		case healthy:
			delay = time.Second
			if time.Since(began) > stableAfter {
				wait = 0 // a session that ran a while reconnects at once; one dropped at once waits
			}
			c.log.Info("qq gateway dropped; reconnecting", "error", err, "resume", st.sessionID != "")
		default:
			delay = min(delay*2, maxBackoff)
			c.log.Warn("qq gateway not reachable; retrying", "error", err, "retry_in", wait)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// errBanned: QQ closed with a code saying the bot cannot be served now.
var errBanned = errors.New("the bot is offline, sandbox-only, banned, or lacks the intents asked for (check it in q.qq.com)")

// errReconnect: QQ asked for a reconnect (op 7).
var errReconnect = errors.New("the gateway asked for a reconnect (op 7)")

// errInvalidSession: QQ ended the session (op 9).
var errInvalidSession = errors.New("the gateway ended the session (op 9)")

// connection is one WebSocket: HELLO, then RESUME (a session to go on)
// or IDENTIFY, heartbeats, dispatches. healthy tells whether the session
// got READY or RESUMED on it.
func (c *Channel) connection(ctx context.Context, st *gatewayState, events chan<- event) (healthy bool, err error) {
	tok, err := c.tokens.get(ctx)
	if err != nil {
		return false, err
	}
	wsURL, err := c.gatewayURL(ctx)
	if err != nil {
		return false, err
	}
	ws, resp, err := websocket.DefaultDialer.DialContext(ctx, wsURL, nil)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		return false, fmt.Errorf("qq gateway dial: %w", err)
	}
	conn := &wsConn{ws: ws}
	defer ws.Close()
	stop := context.AfterFunc(ctx, func() { conn.close(websocket.CloseNormalClosure) })
	defer stop()

	_ = ws.SetReadDeadline(time.Now().Add(helloTimeout))
	var f frame
	var h hello
	if err := ws.ReadJSON(&f); err != nil || f.Op != opHello || json.Unmarshal(f.D, &h) != nil || h.HeartbeatInterval <= 0 {
		return false, fmt.Errorf("qq gateway: no HELLO (op %d): %v", f.Op, err)
	}
	_ = ws.SetReadDeadline(time.Time{})
	if st.sessionID != "" {
		err = conn.send(opResume, resume{Token: authHeader(tok), SessionID: st.sessionID, Seq: st.seq.Load()})
	} else {
		err = conn.send(opIdentify, identify{Token: authHeader(tok), Intents: intents, Shard: [2]int{0, 1},
			Properties: map[string]string{"$os": "linux", "$browser": "nanobot", "$device": "nanobot"}})
	}
	if err != nil {
		return false, err
	}
	var acked atomic.Bool
	acked.Store(true)
	beat := time.Duration(h.HeartbeatInterval) * time.Millisecond
	hbDone := make(chan struct{})
	defer close(hbDone)
	go c.heartbeat(conn, st, beat, &acked, hbDone)

	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return healthy, c.closed(st, tok, err)
		}
		var f frame
		if err := json.Unmarshal(data, &f); err != nil {
			c.log.Warn("qq gateway frame unreadable; dropped", "bytes", len(data), "error", err)
			continue
		}
		switch f.Op {
		case opDispatch:
			if f.S > 0 {
				st.seq.Store(f.S)
			}
			if c.dispatch(ctx, st, f, events) {
				healthy = true
			}
		case opHeartbeatACK:
			acked.Store(true)
		case opReconnect:
			return healthy, errReconnect
		case opInvalidSession:
			var resumable bool
			_ = json.Unmarshal(f.D, &resumable)
			if !resumable {
				st.sessionID = ""
				st.seq.Store(0)
			}
			return healthy, errInvalidSession
		default:
			c.log.Debug("qq gateway opcode ignored", "op", f.Op)
		}
	}
}

// dispatch handles one op 0 and reports whether the session is now ready.
func (c *Channel) dispatch(ctx context.Context, st *gatewayState, f frame, events chan<- event) bool {
	switch f.T {
	case eventReady:
		var r ready
		if err := json.Unmarshal(f.D, &r); err != nil || r.SessionID == "" {
			c.log.Warn("qq READY without a session", "seq", f.S, "error", err)
			return false
		}
		st.sessionID = r.SessionID
		c.setBot(r.User.ID, r.User.Username)
		c.up.Store(true)
		c.log.Info("qq gateway ready", "bot", r.User.Username, "id", r.User.ID, "session", r.SessionID)
		return true
	case eventResumed:
		c.up.Store(true)
		c.log.Info("qq gateway session resumed", "session", st.sessionID, "seq", st.seq.Load())
		return true
	case eventC2CMessage, eventGroupMessage:
		select {
		case events <- event{kind: f.T, seq: f.S, data: f.D}:
		case <-ctx.Done():
		}
	default:
		c.log.Debug("qq gateway event ignored", "type", f.T, "seq", f.S)
	}
	return false
}

// closed is why the connection ended; a close code that rules out resuming
// drops the session, one that blames the token drops the token.
func (c *Channel) closed(st *gatewayState, tok string, err error) error {
	var ce *websocket.CloseError
	if !errors.As(err, &ce) {
		return fmt.Errorf("qq gateway read: %w", err)
	}
	switch ce.Code {
	case closeInvalidToken:
		c.tokens.invalidate(tok)
	case closeInvalidSession, closeInvalidSeq:
		st.sessionID = ""
		st.seq.Store(0)
	case closeBotOffline, closeBotBanned, closeBadIntents, closeDisallowedIntents:
		return fmt.Errorf("%w: %w", errBanned, err)
	}
	return fmt.Errorf("qq gateway closed: %w", err)
}

// heartbeat sends op 1 with the last seq every interval; a heartbeat not
// acknowledged by the next one means a dead connection, closed to reconnect.
func (c *Channel) heartbeat(conn *wsConn, st *gatewayState, every time.Duration, acked *atomic.Bool, done <-chan struct{}) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		if !acked.Swap(false) {
			c.log.Warn("qq gateway heartbeat not acknowledged; reconnecting")
			conn.close(4000)
			return
		}
		var seq any // null before the first dispatch
		if s := st.seq.Load(); s > 0 {
			seq = s
		}
		if err := conn.send(opHeartbeat, seq); err != nil {
			return
		}
	}
}

// gatewayURL asks GET /gateway where the WebSocket is.
func (c *Channel) gatewayURL(ctx context.Context) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var out struct {
		URL string `json:"url"`
	}
	if err := c.call(cctx, http.MethodGet, "/gateway", nil, &out); err != nil {
		return "", err
	}
	if out.URL == "" {
		return "", errors.New("qq GET /gateway: no url")
	}
	return out.URL, nil
}

// wsConn is the socket with one writer at a time.
type wsConn struct {
	ws *websocket.Conn
	mu sync.Mutex
}

func (w *wsConn) send(op int, d any) error {
	data, err := json.Marshal(map[string]any{"op": op, "d": d})
	if err != nil {
		return fmt.Errorf("qq gateway op %d: %w", op, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
	if err := w.ws.WriteMessage(websocket.TextMessage, data); err != nil {
		return fmt.Errorf("qq gateway op %d: %w", op, err)
	}
	return nil
}

// close ends the socket with a close frame; the read loop then returns.
func (w *wsConn) close(code int) {
	w.mu.Lock()
	_ = w.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, ""), time.Now().Add(time.Second))
	w.mu.Unlock()
	_ = w.ws.Close()
}
