package botgateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/peerkit"
)

// peer is a bare gateway: IDENTIFY → READY naming a resume URL, RESUME →
// RESUMED, heartbeats acknowledged; it records the queries it was dialled with.
type peer struct {
	*peerkit.Gateway
	srv       *httptest.Server
	heartbeat time.Duration

	mu      sync.Mutex
	queries []string // path?query of each connection
	beats   int
}

func newPeer(t *testing.T, heartbeat time.Duration) *peer {
	p := &peer{Gateway: peerkit.NewGateway(t, "peer", nil), heartbeat: heartbeat}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.queries = append(p.queries, r.URL.Path+"?"+r.URL.RawQuery)
		p.mu.Unlock()
		p.Serve(w, r, p.heartbeat, 4002, func(s *peerkit.Socket, f peerkit.Frame) bool {
			switch f.Op {
			case peerkit.OpHeartbeat:
				p.mu.Lock()
				p.beats++
				p.mu.Unlock()
				p.ACK(s)
			case peerkit.OpIdentify:
				p.Dispatch("READY", map[string]any{"session_id": p.Open(s), "resume_gateway_url": peerkit.WSURL(p.srv.URL, "/resume"),
					"user": map[string]string{"id": "42", "username": "bot"}})
			case peerkit.OpResume:
				var rs struct {
					SessionID string `json:"session_id"`
					Seq       int64  `json:"seq"`
				}
				_ = json.Unmarshal(f.D, &rs)
				if p.Resume(s, rs.SessionID, rs.Seq, true) {
					p.Dispatch("RESUMED", map[string]any{})
				}
			}
			return true
		})
	}))
	t.Cleanup(func() { p.CloseGateway(1001); p.srv.Close() })
	return p
}

func (p *peer) stats() (queries []string, beats int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.queries...), p.beats
}

// run holds the gateway of p with spec over the defaults; dispatches land in the returned channel.
func run(t *testing.T, p *peer, spec Spec) (*channels.Base, <-chan Dispatch) {
	var b channels.Base
	b.Init("test", nil, nil)
	if spec.URL == nil {
		spec.URL = func(context.Context) (string, error) {
			return peerkit.WSURL(p.srv.URL, "/gateway?v=9&encoding=json"), nil
		}
	}
	spec.Token = func(context.Context) (string, error) { return "token", nil }
	got := make(chan Dispatch, 64)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); Run(ctx, &b, spec, func(_ context.Context, d Dispatch) { got <- d }) }()
	t.Cleanup(func() { cancel(); <-done })
	return &b, got
}

func next(t *testing.T, got <-chan Dispatch) Dispatch {
	t.Helper()
	select {
	case d := <-got:
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("no dispatch")
		return Dispatch{}
	}
}

// A session resumes at READY's resume URL with the looked-up URL's query
// (Discord's v and encoding), and the dispatch missed in between comes, once, in order.
func TestResumeAtTheResumeURLWithTheQuery(t *testing.T) {
	p := newPeer(t, time.Hour)
	b, got := run(t, p, Spec{})
	require.Equal(t, "READY", next(t, got).Type)
	require.Equal(t, "42", b.BotID())
	require.Eventually(t, b.Connected, 10*time.Second, 10*time.Millisecond)
	p.CloseGateway(4000)
	p.Dispatch("MESSAGE_CREATE", map[string]string{"id": "m1"})
	require.Equal(t, "MESSAGE_CREATE", next(t, got).Type)
	require.Equal(t, "RESUMED", next(t, got).Type)
	queries, _ := p.stats()
	require.Equal(t, []string{"/gateway?v=9&encoding=json", "/resume?v=9&encoding=json"}, queries)
}

// With Jitter the first heartbeat comes after a random part of the
// interval, not all of it; the gateway's op 1 asks for one at once.
func TestJitteredFirstHeartbeatAndOneOnRequest(t *testing.T) {
	was := jitter
	jitter = func(time.Duration) time.Duration { return 10 * time.Millisecond }
	t.Cleanup(func() { jitter = was })
	p := newPeer(t, time.Hour)
	_, got := run(t, p, Spec{Jitter: true})
	next(t, got)
	require.Eventually(t, func() bool { _, beats := p.stats(); return beats == 1 }, 10*time.Second, 5*time.Millisecond,
		"the first beat, long before the hour")
	p.SendOp(peerkit.OpHeartbeat, nil)
	require.Eventually(t, func() bool { _, beats := p.stats(); return beats == 2 }, 10*time.Second, 5*time.Millisecond,
		"a beat on the gateway's request")
}
