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
	base  string // serverUrl without a trailing slash
	token string
	hc    *http.Client
}

// apiError is Mattermost's error answer ({"id", "message", "status_code"}).
type apiError struct {
	Status     int    `json:"status_code"`
	ID         string `json:"id"`
	Message    string `json:"message"`
	retryAfter time.Duration
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.ID, e.Message) }

// open makes a request and hands back the answer's body on a 2xx.
func (c *client) open(ctx context.Context, method, path string, body io.Reader, contentType string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+"/api/v4"+path, body)
	if err != nil {
		return nil, fmt.Errorf("mattermost %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("mattermost %s %s: %w", method, path, err)
	}
	if resp.StatusCode < 300 {
		return resp.Body, nil
	}
	defer resp.Body.Close()
	e := &apiError{}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(e)
	e.Status = resp.StatusCode
	for _, h := range []string{"Retry-After", "X-Ratelimit-Reset"} {
		if s, err := strconv.Atoi(resp.Header.Get(h)); err == nil && e.retryAfter == 0 {
			e.retryAfter = time.Duration(max(s, 1)) * time.Second
		}
	}
	return nil, fmt.Errorf("mattermost %s %s: %w", method, path, e)
}

// call sends in as JSON (nil: no body) and decodes the answer into out (nil: dropped).
func (c *client) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	ctype := ""
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body, ctype = bytes.NewReader(raw), "application/json"
	}
	rc, err := c.open(ctx, method, path, body, ctype)
	if err != nil {
		return err
	}
	defer rc.Close()
	if out == nil {
		return nil
	}
	if err := decodeJSON(rc, out); err != nil {
		return fmt.Errorf("mattermost %s %s: the answer is not JSON: %w", method, path, err)
	}
	return nil
}

func decodeJSON(r io.Reader, out any) error {
	return json.NewDecoder(io.LimitReader(r, 8<<20)).Decode(out)
}

// isPermanent: delivery would meet the same refusal again.
func isPermanent(err error) bool {
	var se *channels.SendError
	return errors.As(err, &se) && se.Permanent
}

// sendError tells delivery how to treat a failed call: a 429 waits as
// Mattermost asks; a refusal the same request meets again (a bad token, no
// permission, a deleted channel, a bad request) is permanent; 5xx and the
// network are retried.
func sendError(err error) error {
	var e *apiError
	switch {
	case err == nil || !errors.As(err, &e):
		return err
	case e.Status == http.StatusTooManyRequests:
		return &channels.SendError{Err: err, RetryAfter: max(e.retryAfter, time.Second)}
	case e.Status >= 400 && e.Status < 500 && e.Status != http.StatusRequestTimeout:
		return &channels.SendError{Err: err, Permanent: true}
	}
	return err
}

// post is the part of a Mattermost post the channel reads.
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
	var out post
	if err := c.call(ctx, http.MethodPost, "/posts", p, &out); err != nil {
		return "", sendError(err)
	}
	return out.ID, nil
}
