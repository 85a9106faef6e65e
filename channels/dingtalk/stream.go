package dingtalk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Timing of the stream.
const (
	// pingEvery is how often the app pings the socket; pongWait is how long
	// it waits for any sign of life before taking the socket for dead.
	pingEvery = 30 * time.Second
	pongWait  = 90 * time.Second
	// maxBackoff caps the wait between attempts to connect.
	maxBackoff = time.Minute
	// steadyAfter is how long a connection must have lived for the next
	// attempt to start from the shortest wait again.
	steadyAfter = time.Minute
	// maxFrame bounds one frame read from the socket.
	maxFrame = 4 << 20
)

// userAgent names the client to DingTalk in the registration.
const userAgent = "nanobot-durable/dingtalk-stream"

// errServerDisconnect is the server's SYSTEM disconnect: connect again at once.
var errServerDisconnect = errors.New("dingtalk asked the stream to reconnect")

// streamConn is one open socket; writes (acks, pongs, pings) take turns.
type streamConn struct {
	ws *websocket.Conn
	mu sync.Mutex
}

func (s *streamConn) write(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.ws.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return s.ws.WriteMessage(websocket.TextMessage, data)
}

func (s *streamConn) ping() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(10*time.Second))
}

func (s *streamConn) close() { _ = s.ws.Close() }

// run keeps the stream connected until ctx ends: register, connect, read;
// on every drop it connects again after a wait that doubles up to
// maxBackoff (at once after the server's own disconnect).
func (c *Channel) run(ctx context.Context) {
	messages := make(chan frame, 256)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); c.handleQueue(ctx, messages) }()
	defer wg.Wait()
	delay := time.Second
	for ctx.Err() == nil {
		began := time.Now()
		err := c.connect(ctx, messages)
		c.up.Store(false)
		if ctx.Err() != nil {
			return
		}
		if time.Since(began) > steadyAfter {
			delay = time.Second
		}
		wait := delay
		if errors.Is(err, errServerDisconnect) {
			wait = 0
			c.log.Info("dingtalk stream reconnecting at the server's request")
		} else {
			c.log.Warn("dingtalk stream dropped; reconnecting", "error", err, "in", wait)
			delay = min(delay*2, maxBackoff)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// connect registers a connection, opens it and reads it until it drops.
func (c *Channel) connect(ctx context.Context, messages chan<- frame) error {
	octx, cancel := context.WithTimeout(ctx, callTimeout)
	var ep openResponse
	err := c.postJSON(octx, c.api+openPath, "", openRequest{
		ClientID: c.cfg.ClientID, ClientSecret: c.cfg.ClientSecret, Subscriptions: subscriptions(), UA: userAgent,
	}, &ep)
	cancel()
	if err != nil {
		return fmt.Errorf("register the stream connection: %w", err)
	}
	if ep.Endpoint == "" || ep.Ticket == "" {
		return errors.New("register the stream connection: no endpoint or ticket in the answer")
	}
	c.secrets.Add(ep.Ticket)
	u, err := url.Parse(ep.Endpoint)
	if err != nil || (u.Scheme != "wss" && u.Scheme != "ws") {
		return fmt.Errorf("stream endpoint %q is not a WebSocket URL", ep.Endpoint)
	}
	q := u.Query()
	q.Set("ticket", ep.Ticket)
	u.RawQuery = q.Encode()
	dialer := websocket.Dialer{HandshakeTimeout: callTimeout, Proxy: websocket.DefaultDialer.Proxy}
	ws, resp, err := dialer.DialContext(ctx, u.String(), nil)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		return fmt.Errorf("open the stream %s: %w", ep.Endpoint, err)
	}
	conn := &streamConn{ws: ws}
	defer conn.close()
	c.up.Store(true)
	c.log.Info("dingtalk stream connected", "endpoint", ep.Endpoint)
	return c.read(ctx, conn, messages)
}

// read takes frames off the socket until it drops: pings answered, robot
// messages acknowledged and queued in order, a disconnect obeyed.
func (c *Channel) read(ctx context.Context, conn *streamConn, messages chan<- frame) error {
	ws := conn.ws
	ws.SetReadLimit(maxFrame)
	alive := func() { _ = ws.SetReadDeadline(time.Now().Add(pongWait)) }
	alive()
	ws.SetPongHandler(func(string) error { alive(); return nil })
	stop := context.AfterFunc(ctx, conn.close)
	defer stop()
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(pingEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if conn.ping() != nil {
					return
				}
			}
		}
	}()
	for {
		_, raw, err := ws.ReadMessage()
		if err != nil {
			return fmt.Errorf("read the stream: %w", err)
		}
		alive()
		f, err := decodeFrame(raw)
		if err != nil {
			c.log.Warn("dingtalk stream frame dropped", "message_id", f.Headers.MessageID, "error", err)
			continue
		}
		switch f.Type {
		case frameSystem:
			if err := c.system(conn, f); err != nil {
				return err
			}
		case frameCallback:
			if f.Headers.Topic != topicRobotMessage {
				c.log.Debug("dingtalk callback of another topic acknowledged", "topic", f.Headers.Topic, "message_id", f.Headers.MessageID)
			} else {
				select {
				case messages <- f:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			if err := conn.write(ack(f)); err != nil {
				return fmt.Errorf("acknowledge %s: %w", f.Headers.MessageID, err)
			}
		case frameEvent:
			// Not subscribed to; acknowledged so it is not pushed again.
			if err := conn.write(ack(f)); err != nil {
				return fmt.Errorf("acknowledge %s: %w", f.Headers.MessageID, err)
			}
		default:
			c.log.Debug("dingtalk stream frame of an unknown type ignored", "type", f.Type, "message_id", f.Headers.MessageID)
		}
	}
}

// system handles the server's own frames.
func (c *Channel) system(conn *streamConn, f frame) error {
	switch f.Headers.Topic {
	case topicPing:
		if err := conn.write(pong(f)); err != nil {
			return fmt.Errorf("answer ping %s: %w", f.Headers.MessageID, err)
		}
	case topicDisconnect:
		return errServerDisconnect
	case topicConnected, topicRegistered, topicKeepalive:
		c.log.Debug("dingtalk stream "+f.Headers.Topic, "message_id", f.Headers.MessageID)
	default:
		c.log.Debug("dingtalk system frame ignored", "topic", f.Headers.Topic, "message_id", f.Headers.MessageID)
	}
	return nil
}
