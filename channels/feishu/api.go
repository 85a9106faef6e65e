package feishu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/secrets"
)

// Feishu's JSON error codes the channel tells apart.
const (
	codeRateLimited   = 99991400 // request trigger frequency limit
	codeTokenInvalid  = 99991663 // tenant access token invalid
	codeTokenExpired  = 99991677
	codeTokenMissing  = 99991661
	codeBotNotInChat  = 230002
	codeNoPermission  = 230027
	codeMessageGone   = 230011 // recalled
	codeInvalidTarget = 230001 // invalid receive_id, message_id…
)

// tokenEarly renews the tenant token this long before it expires (as the SDKs do).
const tokenEarly = 3 * time.Minute

// apiError is a refused REST call: the HTTP status and Feishu's code.
type apiError struct {
	Op     string
	Status int
	Code   int
	Msg    string
	// RetryAfter is the rate limit's reset (x-ogw-ratelimit-reset), 0 if none.
	RetryAfter time.Duration
}

func (e *apiError) Error() string {
	return fmt.Sprintf("feishu %s: HTTP %d, code %d: %s", e.Op, e.Status, e.Code, e.Msg)
}

// api calls Feishu's open platform with the app's tenant access token.
type api struct {
	base      string
	appID     string
	appSecret string
	http      *http.Client
	log       *slog.Logger
	tokens    channels.TokenCache
}

// envelope is every JSON answer: code 0 is success.
type envelope struct {
	Code int             `json:"code"`
	Msg  string          `json:"msg"`
	Data json.RawMessage `json:"data"`
}

// newAPI is the client of cfg's app, its tenant token cached and masked.
func newAPI(cfg Config, hc *http.Client, set *secrets.Set, log *slog.Logger) *api {
	a := &api{base: cfg.base(), appID: cfg.AppID, appSecret: cfg.AppSecret, http: hc, log: log}
	a.tokens = channels.TokenCache{Fetch: a.fetchToken, Margin: tokenEarly, Secrets: set}
	return a
}

// fetchToken asks Feishu for a tenant access token (cached by a.tokens).
func (a *api) fetchToken(ctx context.Context) (channels.Token, error) {
	body, _ := json.Marshal(map[string]string{"app_id": a.appID, "app_secret": a.appSecret})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/open-apis/auth/v3/tenant_access_token/internal", bytes.NewReader(body))
	if err != nil {
		return channels.Token{}, fmt.Errorf("feishu tenant token: %w", err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := a.http.Do(req)
	if err != nil {
		return channels.Token{}, fmt.Errorf("feishu tenant token: %w", err)
	}
	defer resp.Body.Close()
	var got struct {
		Code   int    `json:"code"`
		Msg    string `json:"msg"`
		Token  string `json:"tenant_access_token"`
		Expire int    `json:"expire"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&got); err != nil {
		return channels.Token{}, fmt.Errorf("feishu tenant token: HTTP %d: %w", resp.StatusCode, err)
	}
	if got.Code != 0 || got.Token == "" {
		return channels.Token{}, &apiError{Op: "tenant token", Status: resp.StatusCode, Code: got.Code, Msg: got.Msg}
	}
	a.log.Debug("feishu tenant access token fetched", "expires_in", got.Expire)
	return channels.Token{Value: got.Token, TTL: time.Duration(got.Expire) * time.Second}, nil
}

// request is one REST call: a JSON body (or a prepared one and its type).
type request struct {
	op, method, path string
	json             any
	body             []byte
	contentType      string
}

// call makes the request and decodes data into out (nil: ignored). A
// refused token is renewed and the call made once more.
func (a *api) call(ctx context.Context, r request, out any) error {
	resp, err := a.send(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var env envelope
	if err := decodeJSON(resp, &env); err != nil {
		return fmt.Errorf("feishu %s: %w", r.op, err)
	}
	if env.Code != 0 || resp.StatusCode >= 300 {
		return refusal(r.op, resp, env.Code, env.Msg)
	}
	if out != nil && len(env.Data) > 0 {
		if err := json.Unmarshal(env.Data, out); err != nil {
			return fmt.Errorf("feishu %s: data: %w", r.op, err)
		}
	}
	return nil
}

// send makes the request with the token; it retries once with a fresh
// token if Feishu says the one it had is no longer valid.
func (a *api) send(ctx context.Context, r request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		tok, err := a.tokens.Get(ctx)
		if err != nil {
			return nil, err
		}
		body := r.body
		ctype := r.contentType
		if r.json != nil {
			if body, err = json.Marshal(r.json); err != nil {
				return nil, fmt.Errorf("feishu %s: %w", r.op, err)
			}
			ctype = "application/json; charset=utf-8"
		}
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, r.method, a.base+r.path, rd)
		if err != nil {
			return nil, fmt.Errorf("feishu %s: %w", r.op, err)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := a.http.Do(req)
		if err != nil {
			return nil, fmt.Errorf("feishu %s: %w", r.op, err)
		}
		if attempt == 0 && tokenRefused(resp) {
			resp.Body.Close()
			a.tokens.Invalidate(tok)
			a.log.Info("feishu refused the tenant access token; fetching a new one", "op", r.op)
			continue
		}
		return resp, nil
	}
}

// tokenRefused peeks at an error answer for the codes of a bad token,
// leaving the body readable.
func tokenRefused(resp *http.Response) bool {
	if resp.StatusCode < 400 || resp.StatusCode == http.StatusTooManyRequests {
		return false
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	var env envelope
	_ = json.Unmarshal(data, &env)
	return env.Code == codeTokenInvalid || env.Code == codeTokenExpired || env.Code == codeTokenMissing
}

// refusal is the error of an answer that is not a success.
func refusal(op string, resp *http.Response, code int, msg string) *apiError {
	e := &apiError{Op: op, Status: resp.StatusCode, Code: code, Msg: msg}
	if resp.StatusCode == http.StatusTooManyRequests || code == codeRateLimited {
		e.RetryAfter = time.Second
		if s, err := strconv.Atoi(resp.Header.Get("x-ogw-ratelimit-reset")); err == nil && s > 0 {
			e.RetryAfter = time.Duration(s) * time.Second
		}
	}
	return e
}

// sendError tells delivery how to treat a failed call: a rate limit waits
// its reset; a refusal the same request will meet again (not in the chat,
// no permission, a bad id, any other 4xx) is permanent; the rest (5xx, the
// network) is retried with backoff.
func sendError(err error) error {
	if err == nil {
		return nil
	}
	var ae *apiError
	if !errors.As(err, &ae) {
		return err
	}
	if ae.RetryAfter > 0 {
		return &channels.SendError{Err: err, RetryAfter: ae.RetryAfter}
	}
	switch {
	case ae.Code == codeBotNotInChat, ae.Code == codeNoPermission, ae.Code == codeMessageGone, ae.Code == codeInvalidTarget:
		return &channels.SendError{Err: err, Permanent: true}
	case ae.Status >= 400 && ae.Status < 500 && ae.Status != http.StatusRequestTimeout:
		return &channels.SendError{Err: err, Permanent: true}
	}
	return err
}

// decodeJSON reads a JSON answer of at most 8 MB.
func decodeJSON(resp *http.Response, out any) error {
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(out); err != nil {
		return fmt.Errorf("HTTP %d: unreadable answer: %w", resp.StatusCode, err)
	}
	return nil
}
