package feishu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
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

// errCredentials: Feishu refused the app's id and secret.
var errCredentials = errors.New("feishu refused the tenant token request")

// api calls Feishu's open platform with the app's tenant access token.
type api struct {
	appID     string
	appSecret string
	log       *slog.Logger
	tokens    channels.TokenCache
	rest      *channels.API // with the tenant token
	public    *channels.API // without: the token itself
}

// envelope is every JSON answer: code 0 is success.
type envelope struct {
	Code int             `json:"code"`
	Msg  string          `json:"msg"`
	Data json.RawMessage `json:"data"`
}

// readEnvelope is channels.API's view of Feishu's answers: their code,
// and whether it says the tenant token was refused.
func readEnvelope(_ int, body []byte) (string, bool) {
	var env envelope
	if json.Unmarshal(body, &env) != nil || env.Code == 0 {
		return "", false
	}
	return strconv.Itoa(env.Code), slices.Contains([]int{codeTokenInvalid, codeTokenExpired, codeTokenMissing}, env.Code)
}

// judge tells delivery how to treat a refused call: a rate limit waits its
// reset (a second when it names none); a refusal the same request will
// meet again (not in the chat, no permission, a bad id, any other 4xx) is
// permanent; the rest (5xx, the network) is retried with backoff.
func judge(e *channels.HTTPError) error {
	switch code, _ := strconv.Atoi(e.Code); {
	case e.Status == http.StatusTooManyRequests || code == codeRateLimited:
		return &channels.SendError{Err: e, RetryAfter: max(e.RetryAfter, time.Second)}
	case slices.Contains([]int{codeBotNotInChat, codeNoPermission, codeMessageGone, codeInvalidTarget}, code):
		return &channels.SendError{Err: e, Permanent: true}
	}
	return channels.JudgeHTTP(e)
}

// newAPI is the client of cfg's app, its tenant token cached and masked.
func newAPI(cfg Config, hc *http.Client, set *secrets.Set, log *slog.Logger) *api {
	a := &api{appID: cfg.AppID, appSecret: cfg.AppSecret, log: log}
	a.tokens = channels.TokenCache{Fetch: a.fetchToken, Margin: tokenEarly, Secrets: set}
	a.public = &channels.API{Name: Name, Base: cfg.base(), HTTP: hc, Envelope: readEnvelope, Judge: judge}
	rest := *a.public
	rest.Tokens, rest.RetryRefused, rest.RetryAfterHeader = &a.tokens, true, "x-ogw-ratelimit-reset"
	a.rest = &rest
	return a
}

// fetchToken asks Feishu for a tenant access token (cached by a.tokens).
func (a *api) fetchToken(ctx context.Context) (channels.Token, error) {
	var got struct {
		Token  string `json:"tenant_access_token"`
		Expire int    `json:"expire"`
	}
	err := a.public.Call(ctx, http.MethodPost, "/open-apis/auth/v3/tenant_access_token/internal",
		map[string]string{"app_id": a.appID, "app_secret": a.appSecret}, &got)
	var he *channels.HTTPError
	switch {
	case errors.As(err, &he) && (he.Code != "" || he.Status < 500):
		return channels.Token{}, fmt.Errorf("%w: %w", errCredentials, err)
	case err != nil:
		return channels.Token{}, fmt.Errorf("feishu tenant token: %w", err)
	case got.Token == "":
		return channels.Token{}, fmt.Errorf("%w: the answer has no tenant_access_token", errCredentials)
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
// refused token is renewed and the call made once more; a refusal comes
// back judged for delivery.
func (a *api) call(ctx context.Context, r request, out any) error {
	var env envelope
	var err error
	if r.json != nil {
		err = a.rest.Call(ctx, r.method, r.path, r.json, &env)
	} else {
		err = a.rest.Send(ctx, r.method, r.path, r.body, r.contentType, &env)
	}
	if err != nil {
		return err
	}
	if out != nil && len(env.Data) > 0 {
		if err := json.Unmarshal(env.Data, out); err != nil {
			return fmt.Errorf("feishu %s: data: %w", r.op, err)
		}
	}
	return nil
}
