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
	p.gw.Serve(w, r, interval, 4001, func(s *peerkit.Socket, f peerkit.Frame) bool {
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
	noACK := p.noACK
	p.mu.Unlock()
	if !noACK {
		_ = s.Send(map[string]any{"op": peerkit.OpHeartbeatACK, "d": 0})
	}
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
	sid := p.gw.Open(s)
	p.gw.Dispatch("READY", map[string]any{"version": 1, "session_id": sid,
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
	if !p.gw.Resume(s, rs.SessionID, rs.Seq, valid) {
		p.mu.Lock()
		p.stats.InvalidSessions++
		p.mu.Unlock()
		return
	}
	p.mu.Lock()
	p.stats.Resumes++
	p.mu.Unlock()
	p.gw.Dispatch("RESUMED", "")
}

// Dispatch sends an event (op 0) to the bot: at once if it is connected,
// else on its RESUME.
func (p *Peer) Dispatch(event string, d any) { p.gw.Dispatch(event, d) }

// DispatchRaw sends an event whose d is the bytes given, as they are.
func (p *Peer) DispatchRaw(event string, d []byte) { p.Dispatch(event, json.RawMessage(d)) }

// Redeliver dispatches the event that carried message id again, under a
// new seq, as QQ does with an event it is not sure reached the bot.
func (p *Peer) Redeliver(id string) {
	found := p.gw.Redeliver(func(d json.RawMessage) bool {
		var m struct {
			ID string `json:"id"`
		}
		return json.Unmarshal(d, &m) == nil && m.ID == id
	})
	if !found {
		p.t.Errorf("qqpeer: no message %s was dispatched to redeliver", id)
	}
}

// CloseGateway closes the bot's connection with a close code; what is
// dispatched until it resumes is replayed then.
func (p *Peer) CloseGateway(code int) { p.gw.CloseGateway(code) }

// ForgetSession ends the session on the gateway's side: the next RESUME gets op 9.
func (p *Peer) ForgetSession() { p.gw.ForgetSession() }

// Reconnect sends op 7: the bot is to reconnect and resume.
func (p *Peer) Reconnect() { p.gw.SendOp(peerkit.OpReconnect, nil) }

// Connected tells whether the bot holds a live, identified connection.
func (p *Peer) Connected() bool { return p.gw.Connected() }
