package discordpeer

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/nanobot-durable/nanobot/channels/peerkit"
)

// gateway serves the bot's WebSocket: HELLO, then IDENTIFY → READY (and
// GUILD_CREATE) or RESUME → the missed dispatches → RESUMED; heartbeats
// are acknowledged.
func (p *Peer) gateway(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.stats.Connections++
	if strings.HasPrefix(r.URL.Path, "/resume") {
		p.stats.ResumeURLConnections++
	}
	interval := p.heartbeat
	p.mu.Unlock()
	p.Gateway.Serve(w, r, interval, 4002, func(s *peerkit.Socket, f peerkit.Frame) bool {
		switch f.Op {
		case peerkit.OpHeartbeat:
			p.mu.Lock()
			p.stats.Heartbeats++
			p.mu.Unlock()
			p.Gateway.ACK(s)
		case peerkit.OpIdentify:
			return p.identify(s, f.D)
		case peerkit.OpResume:
			p.resume(s, f.D)
		}
		return true
	})
}

func (p *Peer) identify(s *peerkit.Socket, d json.RawMessage) bool {
	var id struct {
		Token   string `json:"token"`
		Intents int    `json:"intents"`
	}
	_ = json.Unmarshal(d, &id)
	if id.Token != "Bot "+Token {
		s.Close(4004, "Authentication failed.")
		return false
	}
	p.mu.Lock()
	p.stats.Identifies++
	p.intents = id.Intents
	guilds := p.guildsLocked()
	p.mu.Unlock()
	var unavailable []map[string]any
	for _, g := range guilds {
		unavailable = append(unavailable, map[string]any{"id": g["id"], "unavailable": true})
	}
	sid := p.Gateway.Open(s)
	p.Gateway.Dispatch("READY", map[string]any{
		"v": 9, "user": p.botUser(), "guilds": unavailable, "session_id": sid,
		"resume_gateway_url": p.wsURL("/resume-gateway"), "shard": []int{0, 1},
		"application": map[string]any{"id": BotID, "flags": 0},
	})
	for _, g := range guilds {
		p.Gateway.Dispatch("GUILD_CREATE", g)
	}
	return true
}

// resume replays what the session missed since the bot's sequence, then
// RESUMED; an unknown session gets INVALID_SESSION (not resumable).
func (p *Peer) resume(s *peerkit.Socket, d json.RawMessage) {
	var rs struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int64  `json:"seq"`
	}
	_ = json.Unmarshal(d, &rs)
	ok := p.Gateway.Resume(s, rs.SessionID, rs.Seq, rs.Token == "Bot "+Token)
	p.mu.Lock()
	if ok {
		p.stats.Resumes++
	} else {
		p.stats.InvalidSessions++
	}
	p.mu.Unlock()
	if ok {
		p.Gateway.Dispatch("RESUMED", map[string]any{})
	}
}

func (p *Peer) wsURL(path string) string { return peerkit.WSURL(p.srv.URL, path) }
