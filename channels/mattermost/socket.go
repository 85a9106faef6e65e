package mattermost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Timing of the event stream.
const (
	pingEvery  = 30 * time.Second
	readWait   = 75 * time.Second
	maxBackoff = time.Minute
)

// resumePoint is where a new connection picks the stream up: Mattermost
// replays the events of connection_id from sequence_number.
type resumePoint struct {
	connID string
	next   int64
}

// errRefused: the server refused the token on the socket.
var errRefused = errors.New("mattermost refused the token (authentication_challenge)")

// listen keeps the event stream open, reconnecting with backoff and
// resuming where the last connection stopped.
func (c *Channel) listen(ctx context.Context) {
	var rp resumePoint
	delay := time.Second
	for ctx.Err() == nil {
		began := time.Now()
		err := c.stream(ctx, &rp)
		c.up.Store(false)
		if ctx.Err() != nil {
			return
		}
		if time.Since(began) > time.Minute {
			delay = time.Second
		}
		if errors.Is(err, errRefused) {
			delay = maxBackoff
		}
		c.log.Warn("mattermost event stream lost; reconnecting", "error", err, "in", delay)
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
		delay = min(delay*2, maxBackoff)
	}
}

// stream runs one connection: the authentication challenge, then events until it fails.
func (c *Channel) stream(ctx context.Context, rp *resumePoint) error {
	if c.bot().ID == "" {
		if err := c.identify(ctx); err != nil {
			return err
		}
	}
	u, err := url.Parse(c.api.base + "/api/v4/websocket")
	if err != nil {
		return err
	}
	u.Scheme = strings.Replace(u.Scheme, "http", "ws", 1)
	if rp.connID != "" {
		u.RawQuery = url.Values{"connection_id": {rp.connID}, "sequence_number": {strconv.FormatInt(rp.next, 10)}}.Encode()
	}
	conn, _, err := websocket.DefaultDialer.DialContext(ctx, u.String(), nil)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	var wmu sync.Mutex
	challenge := map[string]any{"seq": 1, "action": "authentication_challenge", "data": map[string]string{"token": c.cfg.Token}}
	if err := conn.WriteJSON(challenge); err != nil {
		return err
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(pingEvery):
				wmu.Lock()
				_ = conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(10*time.Second))
				wmu.Unlock()
			}
		}
	}()
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(readWait)) })
	for {
		_ = conn.SetReadDeadline(time.Now().Add(readWait))
		_, raw, err := conn.ReadMessage()
		if err != nil {
			return err
		}
		var m struct {
			Event    string          `json:"event"`
			Data     json.RawMessage `json:"data"`
			Seq      int64           `json:"seq"`
			Status   string          `json:"status"`
			SeqReply int             `json:"seq_reply"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			c.log.Warn("mattermost websocket frame dropped: not JSON", "frame", preview(raw))
			continue
		}
		if m.Event == "" {
			if m.SeqReply == 1 && m.Status != "OK" {
				return errRefused
			}
			continue
		}
		rp.next = m.Seq + 1
		c.handleEvent(ctx, rp, m.Event, m.Data)
	}
}

// handleEvent acts on one event of the stream.
func (c *Channel) handleEvent(ctx context.Context, rp *resumePoint, event string, data json.RawMessage) {
	switch event {
	case "hello":
		var h struct {
			ConnectionID string `json:"connection_id"`
		}
		_ = json.Unmarshal(data, &h)
		switch {
		case rp.connID != "" && h.ConnectionID == rp.connID:
			c.log.Info("mattermost event stream resumed", "connection_id", h.ConnectionID)
		case rp.connID != "":
			c.log.Warn("mattermost did not resume the event stream; posts made while it was down are not seen", "connection_id", h.ConnectionID)
		}
		rp.connID = h.ConnectionID
		c.up.Store(true)
	case "posted":
		c.handlePosted(ctx, data)
	case "reaction_added":
		c.handleReaction(ctx, data)
	}
}
