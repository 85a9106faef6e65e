package discord

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/bwmarrin/discordgo"

	"github.com/nanobot-durable/nanobot/channels"
)

// Discord's JSON error codes the channel tells apart.
const (
	codeUnknownChannel = 10003
	codeUnknownMessage = 10008
)

// sendError tells delivery how to treat a failed REST call: a 429 waits
// Discord's retry_after; a refusal the same request will meet again (no
// access, unknown channel, a bad request, a bad token) is permanent;
// anything else (5xx, the network) is retried with backoff.
func sendError(op string, err error) error {
	if err == nil {
		return nil
	}
	wrapped := fmt.Errorf("discord %s: %w", op, err)
	var limited *discordgo.RateLimitError
	if errors.As(err, &limited) {
		return &channels.SendError{Err: wrapped, RetryAfter: limited.RetryAfter}
	}
	if channels.PermanentStatus(statusOf(err)) || errors.Is(err, discordgo.ErrUnauthorized) {
		return &channels.SendError{Err: wrapped, Permanent: true}
	}
	return wrapped
}

// statusOf is the HTTP status Discord answered with (0 for other failures).
func statusOf(err error) int {
	var rest *discordgo.RESTError
	if errors.As(err, &rest) && rest.Response != nil {
		return rest.Response.StatusCode
	}
	return 0
}

// codeOf is Discord's JSON error code of a failed call (0 if none).
func codeOf(err error) int {
	var rest *discordgo.RESTError
	if errors.As(err, &rest) && rest.Message != nil {
		return rest.Message.Code
	}
	return 0
}

// isAuthError: Discord refused the token.
func isAuthError(err error) bool {
	return errors.Is(err, discordgo.ErrUnauthorized) || statusOf(err) == http.StatusUnauthorized
}

// isUnknownMessage: the message to edit is gone.
func isUnknownMessage(err error) bool {
	return codeOf(err) == codeUnknownMessage || (statusOf(err) == http.StatusNotFound && codeOf(err) != codeUnknownChannel)
}

// isChannelGone: the chat itself cannot be written to.
func isChannelGone(err error) bool {
	s := statusOf(err)
	return codeOf(err) == codeUnknownChannel || s == http.StatusForbidden || s == http.StatusUnauthorized
}
