package feishupeer

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// User is someone who talks to the bot.
type User struct {
	OpenID string
	UserID string
	Name   string
}

// Bot is the bot as a mention names it.
var Bot = User{OpenID: BotOpenID, Name: BotName}

// Incoming is a message a user sends, pushed as im.message.receive_v1.
type Incoming struct {
	// ChatID is the chat (oc_…); for a p2p chat one is made up if "".
	ChatID string
	Group  bool
	Sender User
	// Text makes a text message; Mentions are its @_user_N placeholders, in order.
	Text     string
	Mentions []User
	// Type and Content make any other message (post, image, file…): Content is marshalled.
	Type    string
	Content any
	RootID  string
	// ParentID is the message this one answers (the root if "").
	ParentID string
	ThreadID string
	// SenderType is "user" unless set ("bot": a bot's own message).
	SenderType string
}

// Say pushes the message as an event and returns its message_id.
func (p *Peer) Say(in Incoming) string {
	p.mu.Lock()
	id := p.newID("om_user_")
	eventID := p.newID("ev_")
	chat := in.ChatID
	if chat == "" {
		chat = "oc_p2p_" + in.Sender.OpenID
	}
	replyChat := chat
	if !in.Group {
		replyChat = in.Sender.OpenID // the bot answers a p2p chat by the user's open_id
	}
	p.chatOf[id] = replyChat
	if _, ok := p.chatOf[in.RootID]; in.RootID != "" && !ok {
		p.chatOf[in.RootID] = replyChat // the topic's root, sent before the test began
	}
	p.mu.Unlock()
	ev := p.event(in, id, eventID, chat)
	msg := ev["event"].(map[string]any)["message"].(map[string]any)
	p.mu.Lock()
	p.sent[id] = sentMessage{msgType: msg["message_type"].(string), content: msg["content"].(string)}
	p.mu.Unlock()
	payload, _ := json.Marshal(ev)
	p.pushEvent("frame-"+id, payload)
	return id
}

// SayPayload pushes a raw event payload (a broken one, say) in a data frame.
func (p *Peer) SayPayload(frameID string, payload []byte) { p.pushEvent(frameID, payload) }

func (p *Peer) event(in Incoming, id, eventID, chat string) map[string]any {
	typ, content := in.Type, in.Content
	var mentions []map[string]any
	if typ == "" {
		typ, content = "text", map[string]string{"text": in.Text}
		for i, u := range in.Mentions {
			mentions = append(mentions, map[string]any{"key": "@_user_" + strconv.Itoa(i+1), "name": u.Name, "tenant_key": "peer",
				"id": map[string]string{"open_id": u.OpenID, "user_id": u.UserID, "union_id": "on_" + u.OpenID}})
		}
	}
	body, _ := json.Marshal(content)
	chatType := "p2p"
	if in.Group {
		chatType = "group"
	}
	senderType := in.SenderType
	if senderType == "" {
		senderType = "user"
	}
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	msg := map[string]any{"message_id": id, "chat_id": chat, "chat_type": chatType, "message_type": typ,
		"content": string(body), "create_time": now, "update_time": now}
	if mentions != nil {
		msg["mentions"] = mentions
	}
	if in.RootID != "" {
		msg["root_id"], msg["parent_id"] = in.RootID, in.RootID
	}
	if in.ParentID != "" {
		msg["parent_id"] = in.ParentID
	}
	if in.ThreadID != "" {
		msg["thread_id"] = in.ThreadID
	}
	return map[string]any{
		"schema": "2.0",
		"header": map[string]any{"event_id": eventID, "event_type": "im.message.receive_v1", "create_time": now,
			"token": "", "app_id": AppID, "tenant_key": "peer"},
		"event": map[string]any{
			"sender":  map[string]any{"sender_id": map[string]string{"open_id": in.Sender.OpenID, "user_id": in.Sender.UserID, "union_id": "on_" + in.Sender.OpenID}, "sender_type": senderType, "tenant_key": "peer"},
			"message": msg,
		},
	}
}

// sentMessage is a user's message as GET /im/v1/messages/{id} shows it.
type sentMessage struct{ msgType, content string }

// getMessage is GET /im/v1/messages/{id}: a user's message or one the bot sent.
func (p *Peer) getMessage(w http.ResponseWriter, id string) {
	p.mu.Lock()
	m, ok := p.sent[id]
	for _, b := range p.messages {
		if b.ID == id {
			m, ok = sentMessage{msgType: b.MsgType, content: b.Content}, true
		}
	}
	p.mu.Unlock()
	if !ok {
		fail(w, http.StatusBadRequest, 230011, "message not found")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"code": 0, "msg": "success", "data": map[string]any{"items": []any{
		map[string]any{"message_id": id, "msg_type": m.msgType, "body": map[string]string{"content": m.content}}}}})
}
