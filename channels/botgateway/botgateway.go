// Package botgateway is the client of the bot gateway protocol Discord
// defined and QQ copied: HELLO with a heartbeat interval, IDENTIFY opening
// a session (READY names it), heartbeats carrying the last sequence and
// their ACKs, numbered dispatches, RESUME of the session on a new
// connection after a drop or op 7, op 9 ending it, and close codes that
// say what to do next. A channel gives what its platform differs in (a
// Spec) and gets every dispatch, one at a time, in the gateway's order.
package botgateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"sync/atomic"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/wsconn"
)

// The protocol's opcodes (Discord's "Gateway Opcodes"; QQ's are the same).
const (
	opDispatch       = 0  // server: an event (t, s, d)
	opHeartbeat      = 1  // both: d is the last seq received (null before any); from the server: beat now
	opIdentify       = 2  // client: open a session
	opResume         = 6  // client: token, session_id, seq
	opReconnect      = 7  // server: reconnect and resume
	opInvalidSession = 9  // server: the session cannot go on (d: whether it can be resumed)
	opHello          = 10 // server: heartbeat_interval
	opHeartbeatACK   = 11 // server: a heartbeat was received
)

// helloTimeout bounds the wait for HELLO; from then on the heartbeat tells a dead link.
const helloTimeout = 30 * time.Second

// Dispatch is one op 0 event.
type Dispatch struct {
	Type string // t: READY, MESSAGE_CREATE, ...
	Seq  int64  // s
	Data json.RawMessage
}

// Spec is what one platform's gateway differs in.
type Spec struct {
	// URL looks the gateway up (GET /gateway). A session is resumed at
	// READY's resume_gateway_url when it gave one, with this URL's query.
	URL func(ctx context.Context) (string, error)
	// Token is the credentials of one connection (fetched for each).
	Token func(ctx context.Context) (string, error)
	// Auth is the token as IDENTIFY and RESUME carry it (nil: as it is).
	Auth func(token string) string
	// Intents are the events IDENTIFY subscribes to (bits of the platform's).
	Intents int
	// Fatal are close codes no new attempt mends, each with what to fix:
	// the channel says so once and stops trying.
	Fatal map[int]string
	// Fresh are close codes that end the session: the next connection identifies anew.
	Fresh []int
	// Expired is the close code saying the token expired (0: none):
	// Invalidate drops it, so the next connection fetches another.
	Expired    int
	Invalidate func(token string)
	// Jitter sends the first heartbeat after a random part of the
	// interval rather than all of it (Discord asks for it, so that bots
	// that lost the gateway together do not beat in step).
	Jitter  bool
	Backoff channels.Backoff
	Dial    wsconn.Options
}

// Run holds the gateway of the channel b until ctx ends: connect, identify
// or resume, beat, and after every drop reconnect with b.Reconnect. b is up
// once the session is READY or RESUMED. handle gets each dispatch, READY
// and RESUMED included, on a goroutine of its own.
func Run(ctx context.Context, b *channels.Base, spec Spec, handle func(context.Context, Dispatch)) {
	events := channels.NewInOrder(b.Log, b.Name()+" gateway dispatches", handle)
	defer events.Go(ctx)()
	if spec.Auth == nil {
		spec.Auth = func(token string) string { return token }
	}
	g := &gateway{Spec: spec, b: b, name: b.Name() + " gateway", events: events}
	b.Reconnect(ctx, spec.Backoff, g.connection)
}

// gateway is one channel's gateway; its session outlives a connection.
type gateway struct {
	Spec
	b      *channels.Base
	name   string
	events *channels.InOrder[Dispatch]

	sessionID string
	resumeURL string       // READY's resume_gateway_url ("": look the gateway up)
	query     string       // the looked-up URL's query, kept on the resume URL
	seq       atomic.Int64 // the last dispatch's s
}

// frame is one gateway payload.
type frame struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d,omitempty"`
	S  int64           `json:"s,omitempty"`
	T  string          `json:"t,omitempty"`
}

// connection is one WebSocket: HELLO, then RESUME (a session to go on) or
// IDENTIFY, heartbeats, dispatches. It returns why it ended.
func (g *gateway) connection(ctx context.Context) error {
	tok, err := g.Token(ctx)
	if err != nil {
		return err
	}
	addr, err := g.address(ctx)
	if err != nil {
		return err
	}
	o := g.Dial
	o.ReadTimeout = helloTimeout
	conn, err := wsconn.Dial(ctx, addr, o)
	if err != nil {
		return fmt.Errorf("%s: %w", g.name, err)
	}
	defer conn.Close()
	var f frame
	var h struct {
		HeartbeatInterval int64 `json:"heartbeat_interval"` // milliseconds
	}
	if err := conn.ReadJSON(&f); err != nil || f.Op != opHello || json.Unmarshal(f.D, &h) != nil || h.HeartbeatInterval <= 0 {
		return fmt.Errorf("%s: no HELLO (op %d): %v", g.name, f.Op, err)
	}
	conn.SetReadTimeout(0) // the heartbeat tells a dead link
	if g.sessionID != "" {
		err = g.send(conn, opResume, map[string]any{"token": g.Auth(tok), "session_id": g.sessionID, "seq": g.seq.Load()})
	} else {
		err = g.send(conn, opIdentify, map[string]any{"token": g.Auth(tok), "intents": g.Intents, "shard": [2]int{0, 1},
			"properties": map[string]string{"$os": "linux", "$browser": "nanobot", "$device": "nanobot"}})
	}
	if err != nil {
		return err
	}
	l := &link{conn: conn}
	l.acked.Store(true)
	g.beat(l, time.Duration(h.HeartbeatInterval)*time.Millisecond)
	for {
		data, err := conn.Read()
		if err != nil {
			if l.lost.Load() {
				return fmt.Errorf("%s heartbeat not acknowledged", g.name)
			}
			return g.closed(tok, err)
		}
		if err := g.frame(l, data); err != nil {
			return err
		}
	}
}

// address is where to connect: the session's resume URL, else the gateway looked up.
func (g *gateway) address(ctx context.Context) (string, error) {
	if g.sessionID != "" && g.resumeURL != "" {
		if u, err := url.Parse(g.resumeURL); err == nil {
			u.RawQuery = g.query
			return u.String(), nil
		}
	}
	addr, err := g.URL(ctx)
	if err != nil {
		return "", err
	}
	if u, err := url.Parse(addr); err == nil {
		g.query = u.RawQuery
	}
	return addr, nil
}

// link is one connection and its heartbeat's state.
type link struct {
	conn  *wsconn.Conn
	acked atomic.Bool // op 11 came since the last beat
	lost  atomic.Bool // a beat went unacknowledged: the link is dead
}

// beat sends heartbeats every interval (the first after a jittered part
// of it, if the platform asks); one not acknowledged by the next beat
// closes the connection.
func (g *gateway) beat(l *link, interval time.Duration) {
	first := interval
	if g.Jitter {
		first = jitter(interval)
	}
	l.conn.EveryAfter(first, interval, func() error {
		if !l.acked.Swap(false) {
			l.lost.Store(true)
			return errors.New("heartbeat not acknowledged")
		}
		return g.heartbeat(l.conn)
	})
}

// jitter is a random part of interval (a variable: tests pick it).
var jitter = func(interval time.Duration) time.Duration { return 1 + rand.N(interval) }

// heartbeat sends op 1 with the last seq (null before the first dispatch).
func (g *gateway) heartbeat(conn *wsconn.Conn) error {
	var seq any
	if s := g.seq.Load(); s > 0 {
		seq = s
	}
	return g.send(conn, opHeartbeat, seq)
}

// frame handles one payload; an error ends the connection.
func (g *gateway) frame(l *link, data []byte) error {
	var f frame
	if err := json.Unmarshal(data, &f); err != nil {
		g.b.Log.Warn(g.name+" frame unreadable; dropped", "bytes", len(data), "error", err)
		return nil
	}
	g.b.Touch()
	switch f.Op {
	case opDispatch:
		if f.S > 0 {
			g.seq.Store(f.S)
		}
		g.dispatch(f)
	case opHeartbeat:
		return g.heartbeat(l.conn)
	case opHeartbeatACK:
		l.acked.Store(true)
	case opReconnect:
		return channels.RetryIn(0, fmt.Errorf("%s asked for a reconnect (op 7)", g.name))
	case opInvalidSession:
		var resumable bool
		_ = json.Unmarshal(f.D, &resumable)
		if !resumable {
			g.forget()
		}
		return fmt.Errorf("%s ended the session (op 9)", g.name)
	default:
		g.b.Log.Debug(g.name+" opcode ignored", "op", f.Op)
	}
	return nil
}

// dispatch notes READY's session and puts the channel up on READY or
// RESUMED, then queues the event for the channel.
func (g *gateway) dispatch(f frame) {
	switch f.T {
	case "READY":
		var r struct {
			SessionID string `json:"session_id"`
			ResumeURL string `json:"resume_gateway_url"`
			User      struct {
				ID       string `json:"id"`
				Username string `json:"username"`
			} `json:"user"`
		}
		if err := json.Unmarshal(f.D, &r); err != nil || r.SessionID == "" {
			g.b.Log.Warn(g.name+" READY without a session", "seq", f.S, "error", err)
			return
		}
		g.sessionID, g.resumeURL = r.SessionID, r.ResumeURL
		if r.User.ID != "" {
			g.b.SetBot(r.User.ID, r.User.Username)
		}
		g.b.Up()
		g.b.Log.Info(g.name+" ready", "bot", r.User.Username, "id", r.User.ID, "session", r.SessionID)
	case "RESUMED":
		g.b.Up()
		g.b.Log.Info(g.name+" session resumed", "session", g.sessionID, "seq", g.seq.Load())
	}
	g.events.Push(Dispatch{Type: f.T, Seq: f.S, Data: f.D})
}

// forget drops the session: the next connection identifies anew.
func (g *gateway) forget() {
	g.sessionID, g.resumeURL = "", ""
	g.seq.Store(0)
}

// closed is why the connection ended: a close code in Fatal stops the
// channel, Expired drops the token, one in Fresh drops the session.
func (g *gateway) closed(tok string, err error) error {
	code := wsconn.CloseCode(err)
	switch {
	case code == -1:
		return fmt.Errorf("%s read: %w", g.name, err)
	case g.Fatal[code] != "":
		return channels.Fatal(fmt.Errorf("%s refused the bot: %s: %w", g.name, g.Fatal[code], err))
	case code == g.Expired && g.Invalidate != nil:
		g.Invalidate(tok)
	case slices.Contains(g.Fresh, code):
		g.forget()
	}
	return fmt.Errorf("%s closed: %w", g.name, err)
}

// send writes one op.
func (g *gateway) send(conn *wsconn.Conn, op int, d any) error {
	if err := conn.WriteJSON(map[string]any{"op": op, "d": d}); err != nil {
		return fmt.Errorf("%s op %d: %w", g.name, op, err)
	}
	return nil
}
