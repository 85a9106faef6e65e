package wecom

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nanobot-durable/nanobot/channels/wsconn"
)

// errClosed is a request cut short by the connection going away.
var errClosed = errors.New("wecom connection closed")

// refusedError is WeCom's answer to a subscribe it will not take (a wrong
// bot id or secret): trying again at once cannot help.
type refusedError struct {
	code int
	msg  string
}

func (e *refusedError) Error() string {
	return fmt.Sprintf("WeCom refused the subscription (errcode %d: %s): check channels.wecom.botId and channels.wecom.secret", e.code, e.msg)
}

// ackError is a frame WeCom acknowledged with a non-zero errcode.
type ackError struct {
	cmd  string
	code int
	msg  string
}

func (e *ackError) Error() string {
	return fmt.Sprintf("wecom %s: errcode %d: %s", e.cmd, e.code, e.msg)
}

// waiter is a request waiting for its acknowledgement; done closes when
// the next request with the same req_id may go (replies to one callback
// share its req_id, so they go one at a time, as the SDK sends them).
type waiter struct {
	ack  chan frame
	done chan struct{}
}

// conn is one subscribed WebSocket connection.
type conn struct {
	ws      *wsconn.Conn
	closed  <-chan struct{}
	mu      sync.Mutex
	pending map[string]*waiter
	missed  atomic.Int32 // pings not yet acknowledged
}

// dial opens the socket, which lives until ctx ends or it is closed.
func dial(ctx context.Context, url string, limit time.Duration) (*conn, error) {
	ws, err := wsconn.Dial(ctx, url, wsconn.Options{DialTimeout: limit, MaxMessage: 64 << 20})
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", url, err)
	}
	return &conn{ws: ws, closed: ws.Done(), pending: map[string]*waiter{}}, nil
}

// close ends the connection; waiting requests fail with errClosed.
func (c *conn) close() { c.ws.Close() }

func (c *conn) write(f frame) error {
	if err := c.ws.WriteJSON(f); err != nil {
		return fmt.Errorf("write %s: %w", f.Cmd, err)
	}
	return nil
}

// request sends cmd with body under reqID and waits for its
// acknowledgement: nil for errcode 0, an *ackError otherwise.
func (c *conn) request(ctx context.Context, cmd, reqID string, body any) (frame, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return frame{}, fmt.Errorf("encode %s: %w", cmd, err)
	}
	w, err := c.claim(ctx, reqID)
	if err != nil {
		return frame{}, err
	}
	defer c.release(reqID, w)
	if err := c.write(frame{Cmd: cmd, Headers: headers{ReqID: reqID}, Body: raw}); err != nil {
		c.close()
		return frame{}, err
	}
	timer := time.NewTimer(ackTimeout)
	defer timer.Stop()
	select {
	case ack := <-w.ack:
		return acked(cmd, ack)
	case <-timer.C:
		return frame{}, fmt.Errorf("wecom %s: no acknowledgement in %s", cmd, ackTimeout)
	case <-c.closed:
		select { // an answer read just before the close (a refused subscribe) still counts
		case ack := <-w.ack:
			return acked(cmd, ack)
		default:
		}
		return frame{}, fmt.Errorf("wecom %s: %w", cmd, errClosed)
	case <-ctx.Done():
		return frame{}, fmt.Errorf("wecom %s: %w", cmd, ctx.Err())
	}
}

// acked is the outcome an acknowledgement tells.
func acked(cmd string, ack frame) (frame, error) {
	if code := ack.code(); code != 0 {
		return ack, &ackError{cmd: cmd, code: code, msg: ack.ErrMsg}
	}
	return ack, nil
}

// claim waits until no other request holds reqID, then holds it.
func (c *conn) claim(ctx context.Context, reqID string) (*waiter, error) {
	for {
		c.mu.Lock()
		busy := c.pending[reqID]
		if busy == nil {
			w := &waiter{ack: make(chan frame, 1), done: make(chan struct{})}
			c.pending[reqID] = w
			c.mu.Unlock()
			return w, nil
		}
		c.mu.Unlock()
		select {
		case <-busy.done:
		case <-c.closed:
			return nil, errClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (c *conn) release(reqID string, w *waiter) {
	c.mu.Lock()
	if c.pending[reqID] == w {
		delete(c.pending, reqID)
	}
	c.mu.Unlock()
	close(w.done)
}

// subscribe authenticates the connection with the bot's id and secret.
func (c *conn) subscribe(ctx context.Context, botID, secret string) error {
	_, err := c.request(ctx, cmdSubscribe, newReqID(cmdSubscribe), subscribeBody{BotID: botID, Secret: secret})
	var refused *ackError
	if errors.As(err, &refused) {
		return &refusedError{code: refused.code, msg: refused.msg}
	}
	return err
}

// read takes frames until the connection ends: acknowledgements go to the
// request waiting for them, ping acknowledgements reset the missed count,
// callbacks go to onCallback in the order they came.
func (c *conn) read(onCallback func(frame), onBad func(raw []byte, err error)) error {
	for {
		raw, err := c.ws.Read()
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		var f frame
		if err := json.Unmarshal(raw, &f); err != nil {
			onBad(raw, err)
			continue
		}
		switch {
		case f.Cmd == cmdMsgCallback || f.Cmd == cmdEventCallback:
			onCallback(f)
		case f.Cmd == "" && strings.HasPrefix(f.Headers.ReqID, cmdPing):
			c.missed.Store(0)
		case f.Cmd == "":
			c.mu.Lock()
			w := c.pending[f.Headers.ReqID]
			c.mu.Unlock()
			if w == nil {
				onBad(raw, errors.New("acknowledgement of no request"))
				continue
			}
			select {
			case w.ack <- f:
			default: // a second acknowledgement of one request
			}
		default:
			onBad(raw, fmt.Errorf("unknown cmd %q", f.Cmd))
		}
	}
}

// heartbeat pings every interval until the connection ends; two pings
// without an answer and the connection is closed, to be dialled again,
// with lost told why.
func (c *conn) heartbeat(every time.Duration, lost func(error)) {
	c.ws.Every(every, func() error {
		err := fmt.Errorf("no answer to %d pings", maxMissedPongs)
		if c.missed.Load() < maxMissedPongs {
			c.missed.Add(1)
			err = c.write(frame{Cmd: cmdPing, Headers: headers{ReqID: newReqID(cmdPing)}})
		}
		if err != nil {
			lost(err)
		}
		return err
	})
}
