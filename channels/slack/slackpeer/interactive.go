package slackpeer

import (
	"encoding/json"
	"fmt"
	"time"
)

// Click is a user's click on a button of a message the bot posted.
type Click struct {
	User    string
	Channel string
	// Message is the bot's message the button is on (its blocks are sent back, as Slack does).
	Message Message
	// ActionID, BlockID and Value are the button's, as the bot drew it.
	ActionID, BlockID, Value string
	// ActionTS tells clicks apart ("" = a new one).
	ActionTS string
}

// PushClick sends the block_actions interaction of a click over Socket
// Mode and waits for the bot to acknowledge its envelope.
func (p *Peer) PushClick(envelopeID string, c Click) {
	p.t.Helper()
	if c.ActionTS == "" {
		p.mu.Lock()
		p.seq++
		c.ActionTS = fmt.Sprintf("%d.%06d", time.Now().Unix(), p.seq)
		p.mu.Unlock()
	}
	var blocks any = []any{}
	if c.Message.Blocks != "" {
		if err := json.Unmarshal([]byte(c.Message.Blocks), &blocks); err != nil {
			p.t.Fatalf("slackpeer: the message's blocks: %v", err)
		}
	}
	container := map[string]any{"type": "message", "message_ts": c.Message.TS, "channel_id": c.Channel, "is_ephemeral": false}
	msg := map[string]any{"type": "message", "user": BotUserID, "ts": c.Message.TS, "text": c.Message.Text, "blocks": blocks}
	if c.Message.ThreadTS != "" {
		container["thread_ts"], msg["thread_ts"] = c.Message.ThreadTS, c.Message.ThreadTS
	}
	payload := map[string]any{
		"type": "block_actions", "api_app_id": "A0PEER", "token": "verification", "trigger_id": "trig-" + c.ActionTS,
		"team":    map[string]any{"id": "T024BE7LD", "domain": "peer"},
		"user":    map[string]any{"id": c.User, "username": c.User, "team_id": "T024BE7LD"},
		"channel": map[string]any{"id": c.Channel, "name": "peer"}, "container": container, "message": msg,
		"response_url": p.APIURL() + "peer-response", "actions": []any{map[string]any{
			"type": "button", "action_id": c.ActionID, "block_id": c.BlockID, "value": c.Value, "action_ts": c.ActionTS,
			"text": map[string]any{"type": "plain_text", "text": "button"},
		}},
	}
	env := map[string]any{"type": "interactive", "envelope_id": envelopeID, "accepts_response_payload": false, "payload": payload}
	data, err := json.Marshal(env)
	if err != nil {
		p.t.Fatalf("slackpeer: %v", err)
	}
	p.PushAcked(envelopeID, string(data))
}
