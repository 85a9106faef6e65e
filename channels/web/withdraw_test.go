package web

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

// queueTurns is a running turn with messages queued behind it, recording what it is asked to withdraw.
type queueTurns struct {
	mu     sync.Mutex
	queued map[string]string // id → text
	taken  map[string]bool
	asked  []string // session/id
}

func (q *queueTurns) Now(context.Context, string) (TurnNow, error) {
	return TurnNow{Running: true}, nil
}

func (q *queueTurns) Withdraw(_ context.Context, key, id string) (protocol.Withdrawn, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.asked = append(q.asked, key+"/"+id)
	if q.taken[id] {
		return protocol.Withdrawn{}, ErrTaken
	}
	text, ok := q.queued[id]
	if !ok {
		return protocol.Withdrawn{}, ErrNotQueued
	}
	delete(q.queued, id)
	return protocol.Withdrawn{ID: id, Preview: text}, nil
}

func (q *queueTurns) calls() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.asked...)
}

// TestWithdrawThroughTheGuard: a queued message is withdrawn with the token
// from the page's own origin; an injected one and an unknown one are refused
// with their reasons; a missing token, a foreign Host and another site's
// page never reach the turn.
func TestWithdrawThroughTheGuard(t *testing.T) {
	const token = "s3cret"
	c, _, base := startChannelWith(t, func(cfg *config.Config) {
		editBlock(t, cfg, func(b *Config) { b.Token = token })
	})
	_, port, err := net.SplitHostPort(base[len("http://"):])
	require.NoError(t, err)
	auth := []string{"Authorization", "Bearer " + token}
	own := append(auth, "Origin", "http://127.0.0.1:"+port)
	body := `{"chat":"c1","id":"web-2"}`
	require.Equal(t, http.StatusServiceUnavailable, call(t, http.MethodPost, base+"/api/withdraw", body, own...).status, "no Temporal: said so")

	q := &queueTurns{queued: map[string]string{"web-2": "then tidy the docs"}, taken: map[string]bool{"web-1": true}}
	c.UseTemporal(q, "", "default")
	refused := []struct {
		status int
		header []string
	}{
		{http.StatusUnauthorized, nil},
		{http.StatusUnauthorized, []string{"Origin", "http://127.0.0.1:" + port}},
		{http.StatusMisdirectedRequest, append(auth, "Host", "evil.example:"+port, "Origin", "http://evil.example:"+port)},
		{http.StatusForbidden, append(auth, "Origin", "http://evil.example")},
	}
	for _, r := range refused {
		a := call(t, http.MethodPost, base+"/api/withdraw", body, r.header...)
		require.Equal(t, r.status, a.status, "%v: %s", r.header, a.body)
	}
	require.Empty(t, q.calls(), "nothing refused reached the turn")

	a := call(t, http.MethodPost, base+"/api/withdraw", body, own...)
	require.Equal(t, http.StatusOK, a.status, a.body)
	require.JSONEq(t, `{"withdrawn":"web-2","preview":"then tidy the docs"}`, a.body)
	a = call(t, http.MethodPost, base+"/api/withdraw", body, own...)
	require.Equal(t, http.StatusNotFound, a.status, a.body)
	require.Contains(t, a.body, "not queued (already answered or withdrawn)")
	a = call(t, http.MethodPost, base+"/api/withdraw", `{"chat":"c1","id":"web-1"}`, own...)
	require.Equal(t, http.StatusConflict, a.status, a.body)
	require.Contains(t, a.body, "has already taken it in: it will be answered")
	require.Equal(t, []string{"web:c1/web-2", "web:c1/web-2", "web:c1/web-1"}, q.calls())

	for _, bad := range []string{`{"chat":"c1"}`, `{"chat":"../x","id":"web-1"}`, `not json`} {
		require.Equal(t, http.StatusBadRequest, call(t, http.MethodPost, base+"/api/withdraw", bad, own...).status, bad)
	}
	require.Equal(t, http.StatusMethodNotAllowed, call(t, http.MethodGet, base+"/api/withdraw", "", auth...).status)
	require.Len(t, q.calls(), 3, "bad requests never reach the turn")
}
