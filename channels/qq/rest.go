package qq

import (
	"cmp"
	"encoding/json"
	"errors"
	"net/http"
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

// hasCode: QQ refused the call with code in either of its code fields.
func hasCode(err error, code int) bool {
	var he *channels.HTTPError
	var body struct {
		Code    int `json:"code"`
		ErrCode int `json:"err_code"`
	}
	return errors.As(err, &he) && json.Unmarshal(he.Body, &body) == nil && (body.Code == code || body.ErrCode == code)
}

// judge tells delivery how to treat a refused call: QQ's rate limit (a
// 429, or its code in another status) waits; the rest as any platform's.
func judge(e *channels.HTTPError) error {
	if e.Status == http.StatusTooManyRequests || hasCode(e, codeRateLimited) {
		return &channels.SendError{Err: e, RetryAfter: cmp.Or(e.RetryAfter, defaultRetryAfter)}
	}
	return channels.JudgeHTTP(e)
}

// sendError tells delivery how to treat a failed send: refused credentials
// are permanent; the API judged the rest (see judge).
func sendError(err error) error {
	if errors.Is(err, errBadCredentials) {
		return &channels.SendError{Err: err, Permanent: true}
	}
	return err
}

// isDuplicateSeq: QQ already shows the part this msg_seq named.
func isDuplicateSeq(err error) bool { return hasCode(err, codeDuplicateSeq) }
