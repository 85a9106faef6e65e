package dingtalk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
)

// tokenHeader carries the access token on the v1.0 API.
const tokenHeader = "x-acs-dingtalk-access-token"

// apiError is a call DingTalk refused: the HTTP status and DingTalk's own
// code (v1.0's "code" string or the older API's "errcode").
type apiError struct {
	Status     int
	Code       string
	Message    string
	RetryAfter time.Duration
}

func (e *apiError) Error() string {
	return fmt.Sprintf("HTTP %d %s: %s", e.Status, e.Code, e.Message)
}

// Rate-limit answers: HTTP 429, v1.0's Throttling and QpsLimit codes, and
// the robot webhook's errcode 130101 ("send too fast").
const errcodeSendTooFast = "130101"

func (e *apiError) throttled() bool {
	return e.Status == http.StatusTooManyRequests || strings.HasPrefix(e.Code, "Throttling") ||
		strings.Contains(e.Code, "QpsLimit") || e.Code == errcodeSendTooFast
}

// unauthorized: the access token is unknown or expired.
func (e *apiError) unauthorized() bool {
	return e.Status == http.StatusUnauthorized || e.Code == "InvalidAuthentication" || e.Code == "40014" || e.Code == "42001"
}

// Waits after a rate limit that names none: a second for the per-second
// API limits, a minute for the webhook's per-minute one.
const (
	defaultRetryAfter = time.Second
	webhookRetryAfter = time.Minute
)

// maxAnswer bounds an API answer read into memory.
const maxAnswer = 1 << 20

// postJSON posts body to url (with the access token when token is not "")
// and decodes the answer into out (nil: ignored). A refusal is an *apiError.
func (c *Channel) postJSON(ctx context.Context, url, token string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if token != "" {
		req.Header.Set(tokenHeader, token)
	}
	return c.do(req, out)
}

// do sends req and reads DingTalk's answer: a non-2xx status or a non-zero
// errcode is an *apiError, anything else decodes into out.
func (c *Channel) do(req *http.Request, out any) error {
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("read answer: %w", err)
	}
	var env struct {
		Code    string          `json:"code"`
		Message string          `json:"message"`
		Errcode json.RawMessage `json:"errcode"`
		Errmsg  string          `json:"errmsg"`
	}
	_ = json.Unmarshal(raw, &env) // an answer that is not JSON is judged by its status
	errcode := strings.Trim(string(env.Errcode), `"`)
	if resp.StatusCode/100 == 2 && (errcode == "" || errcode == "0" || errcode == "null") {
		if out == nil || len(raw) == 0 {
			return nil
		}
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("bad answer: %w", err)
		}
		return nil
	}
	e := &apiError{Status: resp.StatusCode, Code: env.Code, Message: env.Message}
	if errcode != "" && errcode != "0" && errcode != "null" {
		e.Code, e.Message = errcode, env.Errmsg
	}
	if e.Message == "" {
		e.Message = strings.TrimSpace(string(raw[:min(len(raw), 200)]))
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	return e
}

// sendError tells delivery how to treat a failed call: a rate limit waits
// (Retry-After, else the limit's period); a refused token is dropped and
// retried with a new one; any other refusal will meet the same answer
// again and is permanent; the network and 5xx are retried with backoff.
func (c *Channel) sendError(op, token string, err error) error {
	if err == nil {
		return nil
	}
	wrapped := fmt.Errorf("dingtalk %s: %w", op, err)
	var e *apiError
	if !errors.As(err, &e) {
		return wrapped
	}
	switch {
	case e.throttled():
		wait := e.RetryAfter
		if wait == 0 {
			wait = defaultRetryAfter
			if e.Code == errcodeSendTooFast {
				wait = webhookRetryAfter
			}
		}
		return &channels.SendError{Err: wrapped, RetryAfter: wait}
	case e.unauthorized():
		c.tokens.Invalidate(token)
		return wrapped
	case e.Status >= 400 && e.Status < 500 && e.Status != http.StatusRequestTimeout:
		return &channels.SendError{Err: wrapped, Permanent: true}
	case e.Status/100 == 2:
		return &channels.SendError{Err: wrapped, Permanent: true} // an errcode refusal
	}
	return wrapped
}
