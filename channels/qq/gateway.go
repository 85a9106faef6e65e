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

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/wsconn"
)

// Timing of the gateway connection.
const (
	helloTimeout = 30 * time.Second
	// healthyAfter is how long a session must have run for a drop to be
	// churn, reconnected after the shortest wait.
	healthyAfter = 10 * time.Second
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
	wg.Go(func() { c.handleQueue(ctx, events) })
	defer wg.Wait()
	st := &gatewayState{}
	c.Reconnect(ctx, channels.Backoff{Healthy: healthyAfter}, func(ctx context.Context) error {
		return c.connection(ctx, st, events)
	})
}

// errBanned: QQ closed with a code saying the bot cannot be served now.
var errBanned = errors.New("the bot is offline, sandbox-only, banned, or lacks the intents asked for (check it in q.qq.com)")

// errReconnect: QQ asked for a reconnect (op 7).
var errReconnect = channels.RetryIn(0, errors.New("the gateway asked for a reconnect (op 7)"))

// errInvalidSession: QQ ended the session (op 9).
var errInvalidSession = errors.New("the gateway ended the session (op 9)")

// errNotAcked: a heartbeat was not acknowledged by the next one (a dead link).
var errNotAcked = errors.New("qq gateway heartbeat not acknowledged")

// connection is one WebSocket: HELLO, then RESUME (a session to go on)
// or IDENTIFY, heartbeats, dispatches; the channel is up once the session
// is READY or RESUMED. It returns why the connection ended.
func (c *Channel) connection(ctx context.Context, st *gatewayState, events chan<- event) error {
	tok, err := c.tokens.Get(ctx)
	if err != nil {
		return err
	}
	wsURL, err := c.gatewayURL(ctx)
	if err != nil {
		return err
	}
	conn, err := wsconn.Dial(ctx, wsURL, wsconn.Options{ReadTimeout: helloTimeout})
	if err != nil {
		return fmt.Errorf("qq gateway: %w", err)
	}
	defer conn.Close()
	var f frame
	var h hello
	if err := conn.ReadJSON(&f); err != nil || f.Op != opHello || json.Unmarshal(f.D, &h) != nil || h.HeartbeatInterval <= 0 {
		return fmt.Errorf("qq gateway: no HELLO (op %d): %v", f.Op, err)
	}
	conn.SetReadTimeout(0) // the heartbeat tells a dead link
	if st.sessionID != "" {
		err = sendOp(conn, opResume, resume{Token: authHeader(tok), SessionID: st.sessionID, Seq: st.seq.Load()})
	} else {
		err = sendOp(conn, opIdentify, identify{Token: authHeader(tok), Intents: intents, Shard: [2]int{0, 1},
			Properties: map[string]string{"$os": "linux", "$browser": "nanobot", "$device": "nanobot"}})
	}
	if err != nil {
		return err
	}
	var acked, lost atomic.Bool
	acked.Store(true)
	conn.Every(time.Duration(h.HeartbeatInterval)*time.Millisecond, func() error {
		if !acked.Swap(false) {
			lost.Store(true)
			return errNotAcked
		}
		var seq any // null before the first dispatch
		if s := st.seq.Load(); s > 0 {
			seq = s
		}
		return sendOp(conn, opHeartbeat, seq)
	})

	for {
		data, err := conn.Read()
		if err != nil {
			if lost.Load() {
				return errNotAcked
			}
			return c.closed(st, tok, err)
		}
		var f frame
		if err := json.Unmarshal(data, &f); err != nil {
			c.Log.Warn("qq gateway frame unreadable; dropped", "bytes", len(data), "error", err)
			continue
		}
		c.Touch()
		switch f.Op {
		case opDispatch:
			if f.S > 0 {
				st.seq.Store(f.S)
			}
			c.dispatch(ctx, st, f, events)
		case opHeartbeatACK:
			acked.Store(true)
		case opReconnect:
			return errReconnect
		case opInvalidSession:
			var resumable bool
			_ = json.Unmarshal(f.D, &resumable)
			if !resumable {
				st.sessionID = ""
				st.seq.Store(0)
			}
			return errInvalidSession
		default:
			c.Log.Debug("qq gateway opcode ignored", "op", f.Op)
		}
	}
}

// dispatch handles one op 0: READY or RESUMED put the channel up.
func (c *Channel) dispatch(ctx context.Context, st *gatewayState, f frame, events chan<- event) {
	switch f.T {
	case eventReady:
		var r ready
		if err := json.Unmarshal(f.D, &r); err != nil || r.SessionID == "" {
			c.Log.Warn("qq READY without a session", "seq", f.S, "error", err)
			return
		}
		st.sessionID = r.SessionID
		c.SetBot(r.User.ID, r.User.Username)
		c.Up()
		c.Log.Info("qq gateway ready", "bot", r.User.Username, "id", r.User.ID, "session", r.SessionID)
	case eventResumed:
		c.Up()
		c.Log.Info("qq gateway session resumed", "session", st.sessionID, "seq", st.seq.Load())
	case eventC2CMessage, eventGroupMessage:
		select {
		case events <- event{kind: f.T, seq: f.S, data: f.D}:
		case <-ctx.Done():
		}
	default:
		c.Log.Debug("qq gateway event ignored", "type", f.T, "seq", f.S)
	}
}

// closed is why the connection ended; a close code that rules out resuming
// drops the session, one that blames the token drops the token, one that
// says the bot cannot be served stops the channel.
func (c *Channel) closed(st *gatewayState, tok string, err error) error {
	switch wsconn.CloseCode(err) {
	case -1:
		return fmt.Errorf("qq gateway read: %w", err)
	case closeInvalidToken:
		c.tokens.Invalidate(tok)
	case closeInvalidSession, closeInvalidSeq:
		st.sessionID = ""
		st.seq.Store(0)
	case closeBotOffline, closeBotBanned, closeBadIntents, closeDisallowedIntents:
		return channels.Fatal(fmt.Errorf("qq gateway refused the bot: %w: %w", errBanned, err))
	}
	return fmt.Errorf("qq gateway closed: %w", err)
}

// gatewayURL asks GET /gateway where the WebSocket is.
func (c *Channel) gatewayURL(ctx context.Context) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var out struct {
		URL string `json:"url"`
	}
	if err := c.api.Call(cctx, http.MethodGet, "/gateway", nil, &out); err != nil {
		return "", err
	}
	if out.URL == "" {
		return "", errors.New("qq GET /gateway: no url")
	}
	return out.URL, nil
}

// sendOp writes one gateway op.
func sendOp(conn *wsconn.Conn, op int, d any) error {
	if err := conn.WriteJSON(map[string]any{"op": op, "d": d}); err != nil {
		return fmt.Errorf("qq gateway op %d: %w", op, err)
	}
	return nil
}
