package feishu

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The event a long connection's data frame carries (schema 2.0).
type eventEnvelope struct {
	Schema string `json:"schema"`
	Header struct {
		EventID    string `json:"event_id"`
		EventType  string `json:"event_type"`
		CreateTime string `json:"create_time"`
		AppID      string `json:"app_id"`
	} `json:"header"`
	Event json.RawMessage `json:"event"`
}

// eventMessageReceive is a message sent to the bot or in a chat it is in.
const eventMessageReceive = "im.message.receive_v1"

// userID is a user's ids; allowFrom and chats use the open_id.
type userID struct {
	OpenID  string `json:"open_id"`
	UserID  string `json:"user_id"`
	UnionID string `json:"union_id"`
}

type mention struct {
	Key  string `json:"key"` // the placeholder in the text: @_user_1
	ID   userID `json:"id"`
	Name string `json:"name"`
}

// messageEvent is im.message.receive_v1's event.
type messageEvent struct {
	Sender struct {
		SenderID   userID `json:"sender_id"`
		SenderType string `json:"sender_type"` // "user", "bot"
	} `json:"sender"`
	Message struct {
		MessageID   string    `json:"message_id"`
		RootID      string    `json:"root_id"`
		ParentID    string    `json:"parent_id"`
		CreateTime  string    `json:"create_time"` // ms since the epoch
		ChatID      string    `json:"chat_id"`
		ThreadID    string    `json:"thread_id"`
		ChatType    string    `json:"chat_type"` // "p2p", "group"
		MessageType string    `json:"message_type"`
		Content     string    `json:"content"` // JSON of the message type
		Mentions    []mention `json:"mentions"`
	} `json:"message"`
}

// Chat types.
const (
	chatP2P   = "p2p"
	chatGroup = "group"
)

// decodeMessageEvent reads an im.message.receive_v1 payload; the id it
// returns names the message (or the event) in a log line even on error.
func decodeMessageEvent(raw []byte) (messageEvent, string, error) {
	var env eventEnvelope
	var m messageEvent
	if err := json.Unmarshal(raw, &env); err != nil {
		return m, "", fmt.Errorf("event: %w", err)
	}
	id := env.Header.EventID
	if err := json.Unmarshal(env.Event, &m); err != nil {
		return m, id, fmt.Errorf("event %s: %w", env.Header.EventType, err)
	}
	if m.Message.MessageID != "" {
		id = m.Message.MessageID
	}
	msg := m.Message
	switch {
	case msg.MessageID == "", msg.ChatID == "", msg.MessageType == "":
		return m, id, errors.New("message without message_id, chat_id or message_type")
	case msg.ChatType != chatP2P && msg.ChatType != chatGroup:
		return m, id, fmt.Errorf("message of unknown chat_type %q", msg.ChatType)
	case m.Sender.SenderType != "bot" && m.Sender.SenderID.OpenID == "":
		return m, id, errors.New("message without the sender's open_id")
	}
	return m, id, nil
}
