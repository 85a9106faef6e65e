package dingtalk

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/wsconn"
)

// Timing of the stream.
const (
	// pingEvery is how often the app pings the socket; pongWait is how long
	// it waits for any sign of life before taking the socket for dead.
	pingEvery = 30 * time.Second
	pongWait  = 90 * time.Second
	// steadyAfter is how long a connection must have lived for the next
	// attempt to start from the shortest wait again.
	steadyAfter = time.Minute
	// maxFrame bounds one frame read from the socket.
	maxFrame = 4 << 20
)

// userAgent names the client to DingTalk in the registration.
const userAgent = "nanobot-durable/dingtalk-stream"

// errServerDisconnect is the server's SYSTEM disconnect: connect again at once.
var errServerDisconnect = channels.RetryIn(0, errors.New("dingtalk asked the stream to reconnect"))

// run keeps the stream connected until ctx ends: register, connect, read;
// robot messages are taken in on their own goroutine, in the order they came.
func (c *Channel) run(ctx context.Context) {
	messages := channels.NewInOrder(c.Log, "dingtalk robot messages", c.takeCallback)
	defer messages.Go(ctx)()
	c.Reconnect(ctx, channels.Backoff{Healthy: steadyAfter}, func(ctx context.Context) error {
		return c.connect(ctx, messages)
	})
}

// connect registers a connection, opens it and reads it until it drops.
func (c *Channel) connect(ctx context.Context, messages *channels.InOrder[callback]) error {
	octx, cancel := context.WithTimeout(ctx, callTimeout)
	var ep openResponse
	err := c.public.Call(octx, http.MethodPost, openPath, openRequest{
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
	opts := wsconn.Options{PingEvery: pingEvery, ReadTimeout: pongWait, DialTimeout: callTimeout, MaxMessage: maxFrame}
	err = wsconn.Serve(ctx, u.String(), opts, func(*wsconn.Conn) error {
		c.Up()
		c.Log.Info("dingtalk stream connected", "endpoint", ep.Endpoint)
		return nil
	}, func(conn *wsconn.Conn, raw []byte) error { return c.frame(conn, raw, messages) })
	return fmt.Errorf("dingtalk stream: %w", err)
}

// callback is a robot message and the socket to acknowledge it on.
type callback struct {
	f    frame
	conn *wsconn.Conn
}

// frame takes one frame off the socket: pings answered, robot messages
// queued in order (acknowledged once taken in), a disconnect obeyed.
func (c *Channel) frame(conn *wsconn.Conn, raw []byte, messages *channels.InOrder[callback]) error {
	c.Touch()
	f, err := decodeFrame(raw)
	if err != nil {
		c.Log.Warn("dingtalk stream frame dropped", "message_id", f.Headers.MessageID, "error", err)
		return nil
	}
	switch f.Type {
	case frameSystem:
		return c.system(conn, f)
	case frameCallback:
		if f.Headers.Topic == topicRobotMessage {
			messages.Push(callback{f: f, conn: conn})
			return nil
		}
		c.Log.Debug("dingtalk callback of another topic acknowledged", "topic", f.Headers.Topic, "message_id", f.Headers.MessageID)
		if err := conn.WriteJSON(ack(f)); err != nil {
			return fmt.Errorf("acknowledge %s: %w", f.Headers.MessageID, err)
		}
	case frameEvent:
		// Not subscribed to; acknowledged so it is not pushed again.
		if err := conn.WriteJSON(ack(f)); err != nil {
			return fmt.Errorf("acknowledge %s: %w", f.Headers.MessageID, err)
		}
	default:
		c.Log.Debug("dingtalk stream frame of an unknown type ignored", "type", f.Type, "message_id", f.Headers.MessageID)
	}
	return nil
}

// system handles the server's own frames.
func (c *Channel) system(conn *wsconn.Conn, f frame) error {
	switch f.Headers.Topic {
	case topicPing:
		if err := conn.WriteJSON(pong(f)); err != nil {
			return fmt.Errorf("answer ping %s: %w", f.Headers.MessageID, err)
		}
	case topicDisconnect:
		return errServerDisconnect
	case topicConnected, topicRegistered, topicKeepalive:
		c.Log.Debug("dingtalk stream "+f.Headers.Topic, "message_id", f.Headers.MessageID)
	default:
		c.Log.Debug("dingtalk system frame ignored", "topic", f.Headers.Topic, "message_id", f.Headers.MessageID)
	}
	return nil
}
