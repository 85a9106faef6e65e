package slack

import (
	"errors"
	"fmt"

	"github.com/slack-go/slack"

	"github.com/nanobot-durable/nanobot/channels"
)

// permanentErrors are Slack error codes a retry cannot fix: the chat is
// gone or closed to the bot, or the token is wrong.
var permanentErrors = map[string]bool{
	"channel_not_found": true, "not_in_channel": true, "is_archived": true, "channel_is_archived": true,
	"msg_too_long": true, "no_text": true, "too_many_attachments": true, "invalid_blocks": true,
	"invalid_auth": true, "not_authed": true, "account_inactive": true, "token_revoked": true,
	"token_expired": true, "no_permission": true, "missing_scope": true, "not_allowed_token_type": true,
	"restricted_action": true, "restricted_action_read_only_channel": true,
	"restricted_action_thread_only_channel": true, "restricted_action_non_threadable_channel": true,
	"cannot_reply_to_message": true, "ekm_access_denied": true, "team_access_not_granted": true,
	"invalid_arguments": true, "invalid_arg_name": true, "user_not_found": true,
}

// authErrors mean the token itself is refused.
var authErrors = map[string]bool{
	"invalid_auth": true, "not_authed": true, "account_inactive": true, "token_revoked": true,
	"token_expired": true, "not_allowed_token_type": true,
}

// sendError tells delivery how to treat a failed Slack call: a rate limit
// waits Slack's Retry-After, a permanent refusal is not retried, anything
// else (5xx, network) is retried with backoff.
func sendError(op string, err error) error {
	if err == nil {
		return nil
	}
	wrapped := fmt.Errorf("slack %s: %w", op, err)
	var limited *slack.RateLimitedError
	if errors.As(err, &limited) {
		return &channels.SendError{Err: wrapped, RetryAfter: limited.RetryAfter}
	}
	if code := errorCode(err); permanentErrors[code] {
		return &channels.SendError{Err: wrapped, Permanent: true}
	}
	var status slack.StatusCodeError
	if errors.As(err, &status) && channels.PermanentStatus(status.Code) {
		return &channels.SendError{Err: wrapped, Permanent: true}
	}
	return wrapped
}

// errorCode is Slack's "error" field of a failed call ("" for other failures).
func errorCode(err error) string {
	var resp slack.SlackErrorResponse
	if errors.As(err, &resp) {
		return resp.Err
	}
	var ptr *slack.SlackErrorResponse
	if errors.As(err, &ptr) && ptr != nil {
		return ptr.Err
	}
	return ""
}

// isAuthError tells whether Slack refused the token.
func isAuthError(err error) bool { return authErrors[errorCode(err)] }
