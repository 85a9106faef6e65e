package qqpeer

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/nanobot-durable/nanobot/channels/peerkit"
)

// qqFrame is a dispatch as QQ frames it: with an id of its own.
func qqFrame(seq int64, event string, d []byte) []byte {
	return fmt.Appendf(nil, `{"op":0,"s":%d,"t":%q,"id":"%s:%d","d":%s}`, seq, event, event, seq, d)
}

// gateway serves the bot's WebSocket: HELLO, then IDENTIFY → READY or
// RESUME → the missed dispatches → RESUMED; heartbeats are acknowledged.
func (p *Peer) gateway(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.stats.Connections++
	interval := p.heartbeat
	p.mu.Unlock()
	p.Gateway.Serve(w, r, interval, 4001, func(s *peerkit.Socket, f peerkit.Frame) bool {
		switch f.Op {
		case peerkit.OpHeartbeat:
			p.beat(s, f.D)
		case peerkit.OpIdentify:
			return p.identify(s, f.D)
		case peerkit.OpResume:
			p.resume(s, f.D)
		}
		return true
	})
}

func (p *Peer) beat(s *peerkit.Socket, d json.RawMessage) {
	var seq *int64
	_ = json.Unmarshal(d, &seq)
	p.mu.Lock()
	p.stats.Heartbeats++
	n := int64(-1)
	if seq != nil {
		n = *seq
	}
	p.stats.HeartbeatSeqs = append(p.stats.HeartbeatSeqs, n)
	p.mu.Unlock()
	p.Gateway.ACK(s)
}

func (p *Peer) identify(s *peerkit.Socket, d json.RawMessage) bool {
	var id struct {
		Token   string `json:"token"`
		Intents int    `json:"intents"`
		Shard   []int  `json:"shard"`
	}
	_ = json.Unmarshal(d, &id)
	p.mu.Lock()
	valid := p.validLocked(id.Token)
	if valid {
		p.stats.Identifies++
		p.intents, p.shard = id.Intents, id.Shard
	}
	p.mu.Unlock()
	if !valid {
		s.Close(4004, "invalid token")
		return false
	}
	sid := p.Gateway.Open(s)
	p.Gateway.Dispatch("READY", map[string]any{"version": 1, "session_id": sid,
		"user": map[string]any{"id": BotID, "username": BotName, "bot": true}, "shard": []int{0, 1}})
	return true
}

// resume replays what the session missed after the bot's seq, then
// RESUMED; an unknown session gets op 9 (not resumable).
func (p *Peer) resume(s *peerkit.Socket, d json.RawMessage) {
	var rs struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int64  `json:"seq"`
	}
	_ = json.Unmarshal(d, &rs)
	p.mu.Lock()
	valid := p.validLocked(rs.Token)
	p.mu.Unlock()
	if !p.Gateway.Resume(s, rs.SessionID, rs.Seq, valid) {
		p.mu.Lock()
		p.stats.InvalidSessions++
		p.mu.Unlock()
		return
	}
	p.mu.Lock()
	p.stats.Resumes++
	p.mu.Unlock()
	p.Gateway.Dispatch("RESUMED", "")
}

// Redeliver dispatches the event that carried message id again, under a
// new seq, as QQ does with an event it is not sure reached the bot.
func (p *Peer) Redeliver(id string) {
	found := p.Gateway.Redeliver(func(d json.RawMessage) bool {
		var m struct {
			ID string `json:"id"`
		}
		return json.Unmarshal(d, &m) == nil && m.ID == id
	})
	if !found {
		p.t.Errorf("qqpeer: no message %s was dispatched to redeliver", id)
	}
}
