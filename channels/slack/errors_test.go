package slack

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

// scriptedSlack answers chat.postMessage with the next scripted answer
// (status, Retry-After, body) and records the texts it accepted.
type scriptedSlack struct {
	mu      sync.Mutex
	answers []func(w http.ResponseWriter)
	posted  []string
	calls   int
}

func (s *scriptedSlack) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if len(s.answers) > 0 {
		next := s.answers[0]
		s.answers = s.answers[1:]
		if next != nil {
			next(w)
			return
		}
	}
	s.posted = append(s.posted, r.Form.Get("text"))
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "channel": r.Form.Get("channel"), "ts": "1.00000" + string(rune('0'+len(s.posted)))})
}

func rateLimited(seconds string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", seconds)
		w.WriteHeader(http.StatusTooManyRequests)
	}
}

func slackError(code string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) { _ = json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": code}) }
}

func status(code int) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) { w.WriteHeader(code) }
}

func scriptedChannel(t *testing.T, answers ...func(w http.ResponseWriter)) (*Channel, *scriptedSlack) {
	t.Helper()
	s := &scriptedSlack{answers: answers}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cfg := config.Default()
	b := defaults()
	b.BotToken, b.AppToken, b.APIBase = "xoxb-t", "xapp-t", srv.URL
	b.ReactEmoji, b.DoneEmoji = "", ""
	setBlock(t, cfg, b)
	c, err := New(cfg, channels.Deps{Config: cfg})
	require.NoError(t, err)
	return c, s
}

func TestRateLimitIsRetryAfter(t *testing.T) {
	c, s := scriptedChannel(t, rateLimited("7"))
	err := channels.Deliver(context.Background(), c, reply("turn-1", "C1", "", "hi"))
	var se *channels.SendError
	require.True(t, errors.As(err, &se), "got %v", err)
	require.Equal(t, 7*time.Second, se.RetryAfter)
	require.False(t, se.Permanent)
	require.NoError(t, channels.Deliver(context.Background(), c, reply("turn-1", "C1", "", "hi")), "the retry")
	require.Equal(t, []string{"hi"}, s.posted)
}

func TestPermanentRefusals(t *testing.T) {
	for _, answer := range []struct {
		name string
		fn   func(w http.ResponseWriter)
	}{
		{"channel_not_found", slackError("channel_not_found")},
		{"not_in_channel", slackError("not_in_channel")},
		{"invalid_auth", slackError("invalid_auth")},
		{"HTTP 404", status(http.StatusNotFound)},
	} {
		t.Run(answer.name, func(t *testing.T) {
			c, _ := scriptedChannel(t, answer.fn)
			err := channels.Deliver(context.Background(), c, reply("turn-1", "C1", "", "hi"))
			var se *channels.SendError
			require.True(t, errors.As(err, &se), "got %v", err)
			require.True(t, se.Permanent)
		})
	}
}

func TestTransientFailuresAreRetried(t *testing.T) {
	for _, answer := range []struct {
		name string
		fn   func(w http.ResponseWriter)
	}{
		{"HTTP 500", status(http.StatusInternalServerError)},
		{"HTTP 429 without Retry-After", status(http.StatusTooManyRequests)},
		{"internal_error", slackError("internal_error")},
	} {
		t.Run(answer.name, func(t *testing.T) {
			c, s := scriptedChannel(t, answer.fn)
			err := channels.Deliver(context.Background(), c, reply("turn-1", "C1", "", "hi"))
			require.Error(t, err)
			var se *channels.SendError
			require.False(t, errors.As(err, &se) && se.Permanent, "must be retried: %v", err)
			require.NoError(t, channels.Deliver(context.Background(), c, reply("turn-1", "C1", "", "hi")))
			require.Equal(t, []string{"hi"}, s.posted)
		})
	}
}

func TestRetryAfterAPartialSendPostsOnlyTheRest(t *testing.T) {
	c, s := scriptedChannel(t, nil, rateLimited("1"))
	long := strings.Repeat("a sentence of words. ", 2500)
	// The delivery activity's heartbeat details, as each attempt finds them.
	var progress channels.Progress
	attempt := func() context.Context {
		return channels.WithProgress(context.Background(), progress, func(p channels.Progress) error { progress = p; return nil })
	}
	err := channels.Deliver(attempt(), c, reply("turn-1", "C1", "", long))
	var se *channels.SendError
	require.True(t, errors.As(err, &se), "got %v", err)
	require.Len(t, s.posted, 1, "the first part went out before the limit")
	require.Equal(t, 1, progress.Sent)
	require.NoError(t, channels.Deliver(attempt(), c, reply("turn-1", "C1", "", long)))
	require.Len(t, s.posted, 2)
	require.Equal(t, 3, s.calls)
	require.Equal(t, strings.Fields(long), strings.Fields(s.posted[0]+" "+s.posted[1]), "each part once, in order")
}

func TestRepliesWithoutTurnAreNotDeduplicated(t *testing.T) {
	c, s := scriptedChannel(t)
	r := channels.Reply{Route: reply("", "D1", "", "").Route, Text: "Your pairing code is ABCD", Kind: protocol.ReplySystem}
	require.NoError(t, channels.Deliver(context.Background(), c, r))
	require.NoError(t, channels.Deliver(context.Background(), c, r))
	require.Len(t, s.posted, 2)
}
