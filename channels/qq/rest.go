package qq

import (
	"bytes"
	"cmp"
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

// QQ's JSON error codes the channel tells apart (QQ Bot API, "错误码").
const (
	codeRateLimited  = 22009    // msg limit exceed
	codeDuplicateSeq = 40054005 // a msg_seq already used for this msg_id: the part is out
)

// defaultRetryAfter is the wait on a rate limit that names none.
const defaultRetryAfter = 2 * time.Second

// apiError is QQ's JSON error body, with the HTTP status it came with.
type apiError struct {
	Status  int    `json:"-"`
	Message string `json:"message"`
	Code    int    `json:"code"`
	ErrCode int    `json:"err_code"`
	TraceID string `json:"trace_id"`
	retry   time.Duration
}

func (e *apiError) Error() string {
	return fmt.Sprintf("HTTP %d, code %d: %s (trace %s)", e.Status, e.Code, e.Message, e.TraceID)
}

// hasCode: QQ answered with code in either of its code fields.
func (e *apiError) hasCode(code int) bool { return e.Code == code || e.ErrCode == code }

// call makes one REST call with the access token and decodes the answer
// into out (nil: ignored). A token QQ refuses (401) is replaced once.
func (c *Channel) call(ctx context.Context, method, path string, body, out any) error {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return fmt.Errorf("qq %s %s: %w", method, path, err)
		}
	}
	for attempt := 0; ; attempt++ {
		tok, err := c.tokens.Get(ctx)
		if err != nil {
			return err
		}
		err = c.once(ctx, method, path, tok, payload, out)
		var ae *apiError
		if attempt == 0 && errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
			c.tokens.Invalidate(tok)
			continue
		}
		return err
	}
}

func (c *Channel) once(ctx context.Context, method, path, tok string, payload []byte, out any) error {
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.cfg.apiBase()+path, rd)
	if err != nil {
		return fmt.Errorf("qq %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", authHeader(tok))
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("qq %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode >= 300 {
		ae := &apiError{Status: resp.StatusCode}
		if json.Unmarshal(raw, ae) != nil {
			ae.Message = string(bytes.TrimSpace(raw))
		}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			ae.retry = time.Duration(s) * time.Second
		}
		return fmt.Errorf("qq %s %s: %w", method, path, ae)
	}
	if out != nil && len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("qq %s %s: unreadable answer: %w", method, path, err)
		}
	}
	return nil
}

// sendError tells delivery how to treat a failed send: QQ's rate limit
// waits; a refusal the same request will meet again (a 4xx, bad
// credentials) is permanent; anything else (5xx, the network) is retried.
func sendError(err error) error {
	if err == nil {
		return nil
	}
	var ae *apiError
	switch {
	case errors.Is(err, errBadCredentials):
		return &channels.SendError{Err: err, Permanent: true}
	case !errors.As(err, &ae):
		return err
	case ae.Status == http.StatusTooManyRequests || ae.hasCode(codeRateLimited):
		return &channels.SendError{Err: err, RetryAfter: cmp.Or(ae.retry, defaultRetryAfter)}
	case ae.Status >= 400 && ae.Status < 500 && ae.Status != http.StatusRequestTimeout:
		return &channels.SendError{Err: err, Permanent: true}
	}
	return err
}

// isDuplicateSeq: QQ already shows the part this msg_seq named.
func isDuplicateSeq(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.hasCode(codeDuplicateSeq)
}
