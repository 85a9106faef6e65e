package feishupeer

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// fail is Feishu's error envelope.
func fail(w http.ResponseWriter, status, code int, msg string) {
	if status == http.StatusTooManyRequests {
		w.Header().Set("x-ogw-ratelimit-reset", "2")
	}
	writeJSON(w, status, map[string]any{"code": code, "msg": msg})
}

func (p *Peer) record(r *http.Request, body string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, Call{Method: r.Method, Path: r.URL.RequestURI(), Body: body})
}

// tenantToken is POST /open-apis/auth/v3/tenant_access_token/internal.
func (p *Peer) tenantToken(w http.ResponseWriter, r *http.Request) {
	var req struct {
		AppID     string `json:"app_id"`
		AppSecret string `json:"app_secret"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	p.record(r, "")
	if req.AppID != AppID || req.AppSecret != AppSecret {
		fail(w, http.StatusOK, 10014, "app secret invalid")
		return
	}
	p.mu.Lock()
	p.issued++
	tok := p.newID("t-peer-token-")
	p.tokens[tok] = true
	expire := p.tokenExpire
	p.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"code": 0, "msg": "ok", "tenant_access_token": tok, "expire": expire})
}

// failure is the injected answer due for the request, if any.
func (p *Peer) failure(r *http.Request) *failure {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, x := range p.failures {
		if x.times > 0 && x.method == r.Method && strings.HasPrefix(r.URL.Path, x.pathPrefix) {
			x.times--
			return x
		}
	}
	return nil
}

// rest serves /open-apis/…: the token checked, injected failures given,
// then the call answered.
func (p *Peer) rest(w http.ResponseWriter, r *http.Request) {
	var body []byte
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
		body, _ = io.ReadAll(r.Body)
	}
	p.record(r, string(body))
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	p.mu.Lock()
	valid := p.tokens[tok]
	p.mu.Unlock()
	f := p.failure(r)
	if !valid {
		fail(w, http.StatusBadRequest, 99991663, "Invalid access token for authorization")
		return
	}
	if f != nil {
		fail(w, f.status, f.code, "injected failure")
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/open-apis")
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case r.Method == http.MethodGet && path == "/bot/v3/info":
		writeJSON(w, http.StatusOK, map[string]any{"code": 0, "msg": "ok",
			"bot": map[string]any{"activate_status": 2, "app_name": BotName, "open_id": BotOpenID}})
	case r.Method == http.MethodPost && path == "/im/v1/messages":
		p.create(w, r, body)
	case r.Method == http.MethodPost && path == "/im/v1/images":
		p.upload(w, r, "image")
	case r.Method == http.MethodPost && path == "/im/v1/files":
		p.upload(w, r, "file")
	case len(parts) == 4 && parts[0] == "im" && parts[2] == "messages" && r.Method == http.MethodGet:
		p.getMessage(w, parts[3])
	case len(parts) == 4 && parts[0] == "im" && parts[2] == "messages" && r.Method == http.MethodPatch:
		p.update(w, parts[3], body)
	case len(parts) == 5 && parts[2] == "messages" && parts[4] == "reply" && r.Method == http.MethodPost:
		p.reply(w, parts[3], body)
	case len(parts) >= 5 && parts[2] == "messages" && parts[4] == "reactions":
		p.reaction(w, r, parts, body)
	case len(parts) == 6 && parts[2] == "messages" && parts[4] == "resources" && r.Method == http.MethodGet:
		p.resource(w, r, parts[5])
	default:
		p.t.Errorf("feishupeer: %s %s is not served", r.Method, r.URL)
		fail(w, http.StatusNotFound, 404, "not found")
	}
}

type sendBody struct {
	ReceiveID     string `json:"receive_id"`
	MsgType       string `json:"msg_type"`
	Content       string `json:"content"`
	ReplyInThread bool   `json:"reply_in_thread"`
}

func (b sendBody) check(w http.ResponseWriter) bool {
	if b.MsgType == "" || !json.Valid([]byte(b.Content)) {
		fail(w, http.StatusBadRequest, 230001, "invalid msg_type or content")
		return false
	}
	return true
}

// create is POST /im/v1/messages?receive_id_type=….
func (p *Peer) create(w http.ResponseWriter, r *http.Request, raw []byte) {
	var b sendBody
	_ = json.Unmarshal(raw, &b)
	idType := r.URL.Query().Get("receive_id_type")
	if (idType == "chat_id" && !strings.HasPrefix(b.ReceiveID, "oc_")) || (idType == "open_id" && !strings.HasPrefix(b.ReceiveID, "ou_")) {
		fail(w, http.StatusBadRequest, 230001, "invalid receive_id")
		return
	}
	if !b.check(w) {
		return
	}
	p.mu.Lock()
	m := &Message{ID: p.newID("om_bot_"), ChatID: b.ReceiveID, MsgType: b.MsgType, Content: b.Content, Shown: []string{b.Content}}
	p.messages = append(p.messages, m)
	p.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"code": 0, "msg": "success", "data": map[string]any{"message_id": m.ID, "chat_id": m.ChatID}})
}

// reply is POST /im/v1/messages/{id}/reply: the answer lands in the user's chat.
func (p *Peer) reply(w http.ResponseWriter, parent string, raw []byte) {
	var b sendBody
	_ = json.Unmarshal(raw, &b)
	if !b.check(w) {
		return
	}
	p.mu.Lock()
	chat, ok := p.chatOf[parent]
	if !ok {
		p.mu.Unlock()
		fail(w, http.StatusBadRequest, 230011, "the message was withdrawn or does not exist")
		return
	}
	m := &Message{ID: p.newID("om_bot_"), ChatID: chat, MsgType: b.MsgType, Content: b.Content, ReplyTo: parent, InThread: b.ReplyInThread,
		Shown: []string{b.Content}}
	p.messages = append(p.messages, m)
	p.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"code": 0, "msg": "success", "data": map[string]any{"message_id": m.ID}})
}

// update is PATCH /im/v1/messages/{id}: only a card can be updated.
func (p *Peer) update(w http.ResponseWriter, id string, raw []byte) {
	var b struct {
		Content string `json:"content"`
	}
	_ = json.Unmarshal(raw, &b)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.messages {
		if m.ID != id {
			continue
		}
		if m.MsgType != "interactive" || !json.Valid([]byte(b.Content)) {
			fail(w, http.StatusBadRequest, 230001, "only a card can be updated")
			return
		}
		m.Content = b.Content
		m.Edits++
		m.Shown = append(m.Shown, b.Content)
		writeJSON(w, http.StatusOK, map[string]any{"code": 0, "msg": "success"})
		return
	}
	fail(w, http.StatusBadRequest, 230011, "message not found")
}

// reaction is POST …/reactions and DELETE …/reactions/{reaction_id}.
func (p *Peer) reaction(w http.ResponseWriter, r *http.Request, parts []string, raw []byte) {
	msg := parts[3]
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && len(parts) == 5:
		var b struct {
			ReactionType struct {
				EmojiType string `json:"emoji_type"`
			} `json:"reaction_type"`
		}
		_ = json.Unmarshal(raw, &b)
		id := p.newID("reaction_")
		p.reactionIDs[id] = b.ReactionType.EmojiType
		p.reactions[msg] = append(p.reactions[msg], "+"+b.ReactionType.EmojiType)
		writeJSON(w, http.StatusOK, map[string]any{"code": 0, "msg": "success", "data": map[string]any{"reaction_id": id,
			"reaction_type": map[string]any{"emoji_type": b.ReactionType.EmojiType}}})
	case r.Method == http.MethodDelete && len(parts) == 6:
		emoji, ok := p.reactionIDs[parts[5]]
		if !ok {
			fail(w, http.StatusBadRequest, 231001, "reaction not found")
			return
		}
		delete(p.reactionIDs, parts[5])
		p.reactions[msg] = append(p.reactions[msg], "-"+emoji)
		writeJSON(w, http.StatusOK, map[string]any{"code": 0, "msg": "success"})
	default:
		fail(w, http.StatusNotFound, 404, "not found")
	}
}

// upload is POST /im/v1/images (image_type, image) and /im/v1/files (file_type, file_name, file).
func (p *Peer) upload(w http.ResponseWriter, r *http.Request, kind string) {
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		fail(w, http.StatusBadRequest, 234001, "not multipart")
		return
	}
	field, typeField := "image", "image_type"
	if kind == "file" {
		field, typeField = "file", "file_type"
	}
	f, hdr, err := r.FormFile(field)
	if err != nil || r.FormValue(typeField) == "" {
		fail(w, http.StatusBadRequest, 234001, "missing "+field+" or "+typeField)
		return
	}
	data, _ := io.ReadAll(f)
	name := hdr.Filename
	if kind == "file" {
		name = r.FormValue("file_name")
	}
	p.mu.Lock()
	key := p.newID(kind + "_key_")
	p.uploads = append(p.uploads, Upload{Key: key, Kind: kind, Name: name, Type: r.FormValue(typeField), Data: data})
	p.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"code": 0, "msg": "success", "data": map[string]any{kind + "_key": key}})
}

// resource is GET /im/v1/messages/{id}/resources/{key}?type=image|file.
func (p *Peer) resource(w http.ResponseWriter, r *http.Request, key string) {
	typ := r.URL.Query().Get("type")
	p.mu.Lock()
	f, ok := p.resources[key]
	p.mu.Unlock()
	if typ != "image" && typ != "file" {
		fail(w, http.StatusBadRequest, 234001, "type must be image or file")
		return
	}
	if !ok {
		fail(w, http.StatusBadRequest, 234003, "file not found")
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.name}))
	_, _ = w.Write(f.data)
}
