package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// transport is the HTTP client go-telegram/bot talks through. It makes the
// library's requests readable by any Bot API server and paces polling:
//   - the library sends every call as multipart/form-data; a call without
//     a file goes as application/x-www-form-urlencoded instead (the same
//     fields; Telegram reads both, servers built on common web stacks such
//     as telegram-test-api read only the latter);
//   - getUpdates calls start at least minPoll apart, so a server that
//     answers at once instead of holding the long poll is not hammered;
//   - an error answer that is not the Bot API's {ok:false,…} shape (an
//     HTTP 500 with {"message":…}) is turned into it, so the library
//     reports the server's words instead of an empty error.
type transport struct {
	client  *http.Client
	minPoll time.Duration

	mu       sync.Mutex
	lastPoll time.Time
	// answered tells whether the Bot API answered the last call (channels status).
	answered atomic.Bool
}

// Do implements bot.HttpClient.
func (t *transport) Do(req *http.Request) (*http.Response, error) {
	method := path.Base(req.URL.Path)
	if method == "getUpdates" {
		if err := t.pace(req.Context()); err != nil {
			return nil, err
		}
	}
	if err := formEncode(req); err != nil {
		return nil, fmt.Errorf("telegram %s: %w", method, err)
	}
	resp, err := t.client.Do(req)
	if (method == "getUpdates" || method == "getMe") && req.Context().Err() == nil { // a cancelled poll says nothing
		t.answered.Store(err == nil && resp.StatusCode < 500 && // 401/404: Telegram refuses the token
			resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusNotFound)
	}
	if err != nil {
		return nil, err
	}
	return botAPIShape(resp), nil
}

// pace waits until minPoll has passed since the previous poll started.
func (t *transport) pace(ctx context.Context) error {
	t.mu.Lock()
	wait := time.Until(t.lastPoll.Add(t.minPoll))
	if wait < 0 {
		wait = 0
	}
	t.lastPoll = time.Now().Add(wait)
	t.mu.Unlock()
	if wait == 0 {
		return nil
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// formEncode rewrites a multipart body without file parts as a URL-encoded form.
func formEncode(req *http.Request) error {
	mt, params, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || req.Body == nil {
		return nil
	}
	raw, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return fmt.Errorf("read request body: %w", err)
	}
	keep := func() {
		req.Body = io.NopCloser(bytes.NewReader(raw))
		req.ContentLength = int64(len(raw))
	}
	form := url.Values{}
	r := multipart.NewReader(bytes.NewReader(raw), params["boundary"])
	for {
		part, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read multipart body: %w", err)
		}
		if part.FileName() != "" {
			keep() // an upload stays multipart
			return nil
		}
		value, err := io.ReadAll(part)
		if err != nil {
			return fmt.Errorf("read form field %s: %w", part.FormName(), err)
		}
		form.Add(part.FormName(), string(value))
	}
	body := form.Encode()
	req.Body = io.NopCloser(strings.NewReader(body))
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return nil
}

// botAPIShape turns an error answer in another shape into {ok:false,…}.
func botAPIShape(resp *http.Response) *http.Response {
	if resp.StatusCode < 400 {
		return resp
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if err != nil {
		raw = []byte(err.Error())
	}
	var probe struct {
		OK      *bool  `json:"ok"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &probe) == nil && probe.OK != nil {
		resp.Body = io.NopCloser(bytes.NewReader(raw))
		return resp
	}
	desc := probe.Message
	if desc == "" {
		desc = strings.TrimSpace(string(raw))
	}
	if desc == "" {
		desc = http.StatusText(resp.StatusCode)
	}
	body, _ := json.Marshal(map[string]any{"ok": false, "error_code": resp.StatusCode, "description": desc})
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Type", "application/json")
	return resp
}
