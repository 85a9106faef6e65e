package matrix

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"maunium.net/go/mautrix"

	"github.com/nanobot-durable/nanobot/channels"
)

// defaultRetryAfter is the wait for a 429 that names none.
const defaultRetryAfter = time.Second

// permanentCodes are Matrix error codes a retry cannot fix: the room is
// not there or closed to the bot, the event is malformed or too big, the
// token is refused.
var permanentCodes = map[string]bool{
	"M_FORBIDDEN": true, "M_NOT_FOUND": true, "M_UNKNOWN_TOKEN": true, "M_MISSING_TOKEN": true,
	"M_USER_DEACTIVATED": true, "M_TOO_LARGE": true, "M_BAD_JSON": true, "M_NOT_JSON": true,
	"M_INVALID_PARAM": true, "M_UNRECOGNIZED": true, "M_GUEST_ACCESS_FORBIDDEN": true,
	"M_INVALID_ROOM_STATE": true, "M_BAD_STATE": true,
}

// respError is the homeserver's error of a failed call (nil for network errors).
func respError(err error) (*mautrix.RespError, int) {
	var httpErr mautrix.HTTPError
	if !errors.As(err, &httpErr) {
		var ptr *mautrix.HTTPError
		if !errors.As(err, &ptr) || ptr == nil {
			return nil, 0
		}
		httpErr = *ptr
	}
	status := 0
	if httpErr.Response != nil {
		status = httpErr.Response.StatusCode
	}
	return httpErr.RespError, status
}

// retryAfter is how long a rate-limited call asks to wait: retry_after_ms
// in the body, else the Retry-After header, else a second.
func retryAfter(err error) (time.Duration, bool) {
	re, status := respError(err)
	limited := status == http.StatusTooManyRequests || (re != nil && re.ErrCode == mautrix.MLimitExceeded.ErrCode)
	if !limited {
		return 0, false
	}
	if re != nil {
		if ms, ok := re.ExtraData["retry_after_ms"].(float64); ok && ms > 0 {
			return time.Duration(ms) * time.Millisecond, true
		}
	}
	var httpErr mautrix.HTTPError
	if errors.As(err, &httpErr) && httpErr.Response != nil {
		if s, err := strconv.Atoi(httpErr.Response.Header.Get("Retry-After")); err == nil && s > 0 {
			return time.Duration(s) * time.Second, true
		}
	}
	return defaultRetryAfter, true
}

// sendError tells delivery how to treat a failed call: a rate limit waits
// its retry_after_ms, a refusal (M_FORBIDDEN, an unknown room, a 4xx) is
// permanent, anything else (5xx, network) is retried with backoff.
func sendError(op string, err error) error {
	if err == nil {
		return nil
	}
	wrapped := fmt.Errorf("matrix %s: %w", op, err)
	if wait, ok := retryAfter(err); ok {
		return &channels.SendError{Err: wrapped, RetryAfter: wait}
	}
	re, status := respError(err)
	if re != nil && permanentCodes[re.ErrCode] {
		return &channels.SendError{Err: wrapped, Permanent: true}
	}
	if status >= 400 && status < 500 && status != http.StatusRequestTimeout {
		return &channels.SendError{Err: wrapped, Permanent: true}
	}
	return wrapped
}

// isAuthError tells whether the homeserver refused the credentials.
func isAuthError(err error) bool {
	re, status := respError(err)
	if re != nil {
		switch re.ErrCode {
		case "M_UNKNOWN_TOKEN", "M_MISSING_TOKEN", "M_FORBIDDEN", "M_USER_DEACTIVATED":
			return true
		}
	}
	return status == http.StatusUnauthorized
}
