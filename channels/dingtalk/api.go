package dingtalk

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
)

// tokenHeader carries the access token on the v1.0 API.
const tokenHeader = "x-acs-dingtalk-access-token"

// Rate-limit answers: HTTP 429, v1.0's Throttling and QpsLimit codes, and
// the robot webhook's errcode 130101 ("send too fast").
const errcodeSendTooFast = "130101"

// Waits after a rate limit that names none: a second for the per-second
// API limits, a minute for the webhook's per-minute one.
const (
	defaultRetryAfter = time.Second
	webhookRetryAfter = time.Minute
)

// readEnvelope is channels.API's view of DingTalk's answers: the older
// API's errcode (in a 2xx too) or v1.0's code (in a refusal), and whether
// it says the access token is unknown or expired.
func readEnvelope(status int, body []byte) (string, bool) {
	var env struct {
		Code    string          `json:"code"`
		Errcode json.RawMessage `json:"errcode"`
	}
	_ = json.Unmarshal(body, &env) // an answer that is not JSON is judged by its status
	code := strings.Trim(string(env.Errcode), `"`)
	if code == "0" || code == "null" {
		code = ""
	}
	if code == "" && status/100 != 2 {
		code = env.Code
	}
	return code, code == "InvalidAuthentication" || code == "40014" || code == "42001"
}

// judge tells delivery how to treat a refused call: a rate limit waits
// (Retry-After, else the limit's period); an errcode in a 2xx answer, or
// a 4xx, would meet the same answer again and is permanent; the network
// and 5xx are retried with backoff. A refused token is dropped by the API.
func judge(e *channels.HTTPError) error {
	switch {
	case e.Status == http.StatusTooManyRequests || strings.HasPrefix(e.Code, "Throttling") ||
		strings.Contains(e.Code, "QpsLimit") || e.Code == errcodeSendTooFast:
		wait := e.RetryAfter
		if wait == 0 {
			wait = defaultRetryAfter
			if e.Code == errcodeSendTooFast {
				wait = webhookRetryAfter
			}
		}
		return &channels.SendError{Err: e, RetryAfter: wait}
	case e.Status/100 == 2:
		return &channels.SendError{Err: e, Permanent: true}
	}
	return channels.JudgeHTTP(e)
}

// newAPI is DingTalk's API at base: with the access token in tokenHeader,
// in the access_token parameter (the older API), or without ("").
func (c *Channel) newAPI(base, token string) *channels.API {
	a := &channels.API{Name: Name, Base: base, HTTP: c.http, Envelope: readEnvelope, Judge: judge}
	switch token {
	case tokenHeader:
		a.Tokens, a.TokenHeader = &c.tokens, tokenHeader
	case "access_token":
		a.Tokens, a.TokenQuery = &c.tokens, "access_token"
	}
	return a
}
