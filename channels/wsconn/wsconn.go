// Package wsconn is the WebSocket client of the channels whose platform
// pushes events over a socket (DingTalk, QQ, WeCom, Feishu, Discord): the dial, a
// keep-alive (WebSocket pings or the protocol's own heartbeat), a read
// deadline that takes a silent socket for dead, writes that take turns,
// and the close code a platform ends a session with.
package wsconn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Options shape one connection.
type Options struct {
	Header http.Header
	// PingEvery sends a WebSocket ping this often (0: none, the protocol
	// has a heartbeat of its own: see Conn.Every).
	PingEvery time.Duration
	// ReadTimeout is how long the socket may bring nothing (no message, no
	// pong) before it is taken for dead (0: no deadline).
	ReadTimeout time.Duration
	// DialTimeout bounds the handshake (default 30 s).
	DialTimeout time.Duration
	// MaxMessage bounds one message read (default 4 MiB).
	MaxMessage int64
	// Proxy picks a proxy per request (default: the environment's).
	Proxy func(*http.Request) (*url.URL, error)
}

// DialError is a handshake the server answered with a refusal; its
// headers may say why (Feishu's Handshake-Status).
type DialError struct {
	Status int
	Header http.Header
	Err    error
}

func (e *DialError) Error() string {
	return fmt.Sprintf("websocket dial: HTTP %d: %v", e.Status, e.Err)
}
func (e *DialError) Unwrap() error { return e.Err }

// Conn is one open socket. Reads are the caller's loop; writes, pings and
// heartbeats may come from any goroutine.
type Conn struct {
	ws      *websocket.Conn
	opts    Options
	wmu     sync.Mutex
	done    chan struct{}
	once    sync.Once
	stopCtx func() bool
}

// Dial opens addr. The socket closes when ctx ends, so a read blocked on it returns.
func Dial(ctx context.Context, addr string, o Options) (*Conn, error) {
	if o.DialTimeout <= 0 {
		o.DialTimeout = 30 * time.Second
	}
	if o.MaxMessage <= 0 {
		o.MaxMessage = 4 << 20
	}
	proxy := http.ProxyFromEnvironment
	if o.Proxy != nil {
		proxy = o.Proxy
	}
	d := websocket.Dialer{HandshakeTimeout: o.DialTimeout, Proxy: proxy}
	ws, resp, err := d.DialContext(ctx, addr, o.Header)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		if resp != nil {
			return nil, &DialError{Status: resp.StatusCode, Header: resp.Header, Err: err}
		}
		return nil, fmt.Errorf("websocket dial: %w", err)
	}
	c := &Conn{ws: ws, opts: o, done: make(chan struct{})}
	ws.SetReadLimit(o.MaxMessage)
	c.alive()
	ws.SetPongHandler(func(string) error { c.alive(); return nil })
	c.stopCtx = context.AfterFunc(ctx, func() { c.CloseWith(websocket.CloseNormalClosure, "") })
	if o.PingEvery > 0 {
		c.Every(o.PingEvery, c.ping)
	}
	return c, nil
}

// alive pushes the read deadline on: the socket brought something.
func (c *Conn) alive() {
	if c.opts.ReadTimeout > 0 {
		_ = c.ws.SetReadDeadline(time.Now().Add(c.opts.ReadTimeout))
	}
}

// Read is the next message (text or binary); an error ends the connection.
func (c *Conn) Read() ([]byte, error) {
	_, data, err := c.ws.ReadMessage()
	if err != nil {
		c.Close()
		return nil, err
	}
	c.alive()
	return data, nil
}

// ReadJSON reads the next message into v.
func (c *Conn) ReadJSON(v any) error {
	data, err := c.Read()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("websocket message not JSON: %w", err)
	}
	return nil
}

// WriteJSON sends v as a text message.
func (c *Conn) WriteJSON(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.write(websocket.TextMessage, data)
}

// WriteText sends a text message.
func (c *Conn) WriteText(data []byte) error { return c.write(websocket.TextMessage, data) }

// WriteBinary sends a binary message.
func (c *Conn) WriteBinary(data []byte) error { return c.write(websocket.BinaryMessage, data) }

func (c *Conn) write(typ int, data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return c.ws.WriteMessage(typ, data)
}

func (c *Conn) ping() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(10*time.Second))
}

// Every runs beat every d until the connection closes (a protocol's
// heartbeat); a beat that fails closes the connection, so its read ends.
func (c *Conn) Every(d time.Duration, beat func() error) { c.EveryAfter(d, d, beat) }

// EveryAfter is Every whose first beat comes after first (a jittered start).
func (c *Conn) EveryAfter(first, d time.Duration, beat func() error) {
	go func() {
		t := time.NewTimer(first)
		defer t.Stop()
		for {
			select {
			case <-c.done:
				return
			case <-t.C:
				if err := beat(); err != nil {
					c.Close()
					return
				}
				t.Reset(d)
			}
		}
	}()
}

// Done is closed once the connection is.
func (c *Conn) Done() <-chan struct{} { return c.done }

// CloseWith says why in a close frame, then closes the socket.
func (c *Conn) CloseWith(code int, reason string) {
	c.wmu.Lock()
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
	c.wmu.Unlock()
	c.Close()
}

// Close closes the socket (again: a no-op).
func (c *Conn) Close() {
	c.once.Do(func() {
		close(c.done)
		if c.stopCtx != nil {
			c.stopCtx()
		}
		_ = c.ws.Close()
	})
}

// CloseCode is the code of the close frame that ended a read (-1: the
// socket ended without one).
func CloseCode(err error) int {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return -1
}

// Serve is one connection: dial addr, open the session (identify, or
// resume the one the last connection had: the channel's hook, which marks
// the channel up once the platform took it), then hand each message to
// handle until the socket ends or handle fails. It returns why it ended.
func Serve(ctx context.Context, addr string, o Options, open func(*Conn) error, handle func(*Conn, []byte) error) error {
	c, err := Dial(ctx, addr, o)
	if err != nil {
		return err
	}
	defer c.Close()
	if open != nil {
		if err := open(c); err != nil {
			return err
		}
	}
	for {
		data, err := c.Read()
		if err != nil {
			return err
		}
		if err := handle(c, data); err != nil {
			return err
		}
	}
}

// SetReadTimeout changes the read deadline from now on (0: none), for a
// protocol whose handshake is bounded and whose heartbeat then tells a dead link.
func (c *Conn) SetReadTimeout(d time.Duration) {
	c.opts.ReadTimeout = d
	if d == 0 {
		_ = c.ws.SetReadDeadline(time.Time{})
		return
	}
	c.alive()
}
