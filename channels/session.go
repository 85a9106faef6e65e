package channels

import "github.com/nanobot-durable/nanobot/protocol"

// UnifiedSessionKey is the one session of unifiedSession mode.
const UnifiedSessionKey = "unified:default"

// sessionKey is the one session rule, nanobot's _effective_session_key:
// the channel's scope (its override) wins, else unifiedSession's one
// session, else the chat's, channel:chat_id. Channels only report scopes.
func sessionKey(msg protocol.Inbound, unified bool) string {
	s := msg.Scope
	if s == nil && unified {
		return UnifiedSessionKey
	}
	if s == nil {
		return protocol.SessionKey(msg.Route.Channel, msg.Route.ChatID)
	}
	chat := msg.Route.ChatID
	if s.In != "" {
		chat = s.In
	}
	key := protocol.SessionKey(msg.Route.Channel, chat)
	if s.ID == "" {
		return key
	}
	if s.Kind != "" {
		key += ":" + s.Kind
	}
	return key + ":" + s.ID
}
