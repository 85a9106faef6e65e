package mattermost

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/wsconn"
)

// resumePoint is where a new connection picks the stream up: Mattermost
// replays the events of connection_id from sequence_number.
type resumePoint struct {
	connID string
	next   int64
}

// connect is one connection of the event stream: the authentication
// challenge, then events until it drops; the next names this one to resume.
func (c *Channel) connect(ctx context.Context) error {
	if c.BotID() == "" {
		if err := c.identify(ctx); err != nil {
			return err
		}
	}
	addr := strings.Replace(c.api.Base, "http", "ws", 1) + "/websocket"
	if c.resume.connID != "" {
		addr += "?" + url.Values{"connection_id": {c.resume.connID}, "sequence_number": {strconv.FormatInt(c.resume.next, 10)}}.Encode()
	}
	challenge := map[string]any{"seq": 1, "action": "authentication_challenge", "data": map[string]string{"token": c.cfg.Token}}
	return wsconn.Serve(ctx, addr, wsconn.Options{PingEvery: 30 * time.Second, ReadTimeout: 90 * time.Second},
		func(conn *wsconn.Conn) error { return conn.WriteJSON(challenge) },
		func(_ *wsconn.Conn, raw []byte) error {
			var m struct {
				Event    string          `json:"event"`
				Data     json.RawMessage `json:"data"`
				Seq      int64           `json:"seq"`
				Status   string          `json:"status"`
				SeqReply int             `json:"seq_reply"`
			}
			switch err := json.Unmarshal(raw, &m); {
			case err != nil:
				c.Log.Warn("mattermost websocket frame dropped: not JSON", "bytes", len(raw))
			case m.Event == "" && m.SeqReply == 1 && m.Status != "OK":
				return channels.Fatal(errors.New("mattermost refused channels.mattermost.token (authentication_challenge)"))
			case m.Event != "":
				c.resume.next = m.Seq + 1
				c.handleEvent(ctx, m.Event, m.Data)
			}
			return nil
		})
}

// handleEvent acts on one event of the stream.
func (c *Channel) handleEvent(ctx context.Context, event string, data json.RawMessage) {
	switch event {
	case "hello":
		var h struct {
			ConnectionID string `json:"connection_id"`
		}
		_ = json.Unmarshal(data, &h)
		switch was := c.resume.connID; {
		case was != "" && h.ConnectionID == was:
			c.Log.Info("mattermost event stream resumed", "connection_id", was)
		case was != "":
			c.Log.Warn("mattermost did not resume the event stream; posts made while it was down are not seen", "connection_id", h.ConnectionID)
		}
		c.resume.connID = h.ConnectionID
		c.Up()
	case "posted":
		c.handlePosted(ctx, data)
	case "reaction_added":
		c.handleReaction(ctx, data)
	}
}
