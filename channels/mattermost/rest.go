package mattermost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
)

// client calls Mattermost's REST API v4 with the bot's token.
type client struct {
	base, token string // base: serverUrl without a trailing slash
	hc          *http.Client
}

// open makes a request and hands back the answer's body on a 2xx. A
// refusal the same request meets again (4xx) is a permanent SendError, a
// 429 one that waits as Mattermost asks; 5xx and the network are retried.
func (c *client) open(ctx context.Context, method, path string, body io.Reader, contentType string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+"/api/v4"+path, body)
	if err != nil {
		return nil, fmt.Errorf("mattermost %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", contentType)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("mattermost %s %s: %w", method, path, err)
	}
	if resp.StatusCode < 300 {
		return resp.Body, nil
	}
	defer resp.Body.Close()
	var answer struct{ ID, Message string } // Mattermost's error body
	_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&answer)
	err = fmt.Errorf("mattermost %s %s: %d %s: %s", method, path, resp.StatusCode, answer.ID, answer.Message)
	switch s := resp.StatusCode; {
	case s == http.StatusTooManyRequests:
		wait, _ := strconv.Atoi(resp.Header.Get("X-Ratelimit-Reset")) // seconds
		return nil, &channels.SendError{Err: err, RetryAfter: time.Duration(max(wait, 1)) * time.Second}
	case s >= 400 && s < 500 && s != http.StatusRequestTimeout:
		return nil, &channels.SendError{Err: err, Permanent: true}
	}
	return nil, err
}

// call sends in as JSON (nil: no body) and decodes the answer into out (nil: dropped).
func (c *client) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(raw)
	}
	return c.send(ctx, method, path, body, "application/json", out)
}

// send sends body and decodes the answer into out (nil: dropped).
func (c *client) send(ctx context.Context, method, path string, body io.Reader, contentType string, out any) error {
	rc, err := c.open(ctx, method, path, body, contentType)
	if err != nil {
		return err
	}
	defer rc.Close()
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(rc, 8<<20)).Decode(out); err != nil {
		return fmt.Errorf("mattermost %s %s: the answer is not JSON: %w", method, path, err)
	}
	return nil
}

// isPermanent: delivery would meet the same refusal again.
func isPermanent(err error) bool {
	var se *channels.SendError
	return errors.As(err, &se) && se.Permanent
}

// post is the part of a Mattermost post the channel reads and writes.
type post struct {
	ID        string         `json:"id,omitempty"`
	UserID    string         `json:"user_id,omitempty"`
	ChannelID string         `json:"channel_id,omitempty"`
	RootID    string         `json:"root_id,omitempty"`
	Message   string         `json:"message,omitempty"`
	Type      string         `json:"type,omitempty"`
	CreateAt  int64          `json:"create_at,omitempty"`
	FileIDs   []string       `json:"file_ids,omitempty"`
	Props     map[string]any `json:"props,omitempty"`
}

// createPost is POST /posts; it returns the new post's id.
func (c *client) createPost(ctx context.Context, p post) (string, error) {
	err := c.call(ctx, http.MethodPost, "/posts", p, &p)
	return p.ID, err
}
