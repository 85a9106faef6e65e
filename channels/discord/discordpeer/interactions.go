package discordpeer

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Press is a user's press of a button under a bot's message.
type Press struct {
	ID        string // a new snowflake when "" (the same id again is a redelivery)
	ChannelID string
	GuildID   string // "" in a direct message
	User      User
	MessageID string
	CustomID  string
	Type      int // 3 (a message component) when 0
}

// InteractionResponse is the bot's answer to an interaction.
type InteractionResponse struct {
	ID, Token string
	Type      int
	Content   string
	Ephemeral bool
}

// Press sends the INTERACTION_CREATE of a button press and returns its id.
func (p *Peer) Press(in Press) string {
	id := in.ID
	if id == "" {
		id = p.ID()
	}
	kind := in.Type
	if kind == 0 {
		kind = 3
	}
	d := map[string]any{
		"id": id, "application_id": BotID, "type": kind, "token": "token-" + id, "version": 1,
		"channel_id": in.ChannelID, "data": map[string]any{"custom_id": in.CustomID, "component_type": 2},
		"message": map[string]any{"id": in.MessageID, "channel_id": in.ChannelID, "author": p.botUser(), "content": "", "type": 0},
	}
	if in.GuildID != "" {
		d["guild_id"] = in.GuildID
		d["member"] = map[string]any{"user": in.User.payload(), "roles": []any{}, "joined_at": "2024-01-01T00:00:00.000000+00:00"}
	} else {
		d["user"] = in.User.payload()
	}
	p.Dispatch("INTERACTION_CREATE", d)
	return id
}

// Responses are the bot's answers to interactions, in order.
func (p *Peer) Responses() []InteractionResponse {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]InteractionResponse(nil), p.responses...)
}

func (p *Peer) interactionCallback(w http.ResponseWriter, id, token, body string) {
	var resp struct {
		Type int `json:"type"`
		Data *struct {
			Content string `json:"content"`
			Flags   int    `json:"flags"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || resp.Type == 0 {
		restError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return
	}
	if !strings.HasPrefix(token, "token-") {
		restError(w, http.StatusUnauthorized, 50027, "Invalid Webhook Token")
		return
	}
	r := InteractionResponse{ID: id, Token: token, Type: resp.Type}
	if resp.Data != nil {
		r.Content, r.Ephemeral = resp.Data.Content, resp.Data.Flags&64 != 0
	}
	p.mu.Lock()
	p.responses = append(p.responses, r)
	p.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// components keeps a message's components as sent ("" for none or null).
func components(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return ""
	}
	return s
}
