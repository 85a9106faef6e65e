package wecompeer

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Message is what a user sends the bot.
type Message struct {
	// MsgID is WeCom's message id; "" for a new one.
	MsgID string
	// From is the sender's userid.
	From string
	// ChatID is the group chat's id; "" for a DM.
	ChatID string
	// MsgType is "text" unless set ("image", "file", "voice", "mixed", …).
	MsgType string
	Text    string
	// Image and File are resources made with AddFile.
	Image *Resource
	File  *Resource
	// Voice is WeCom's transcription of a voice message.
	Voice string
	// Items make a mixed message.
	Items []Item
	// Body replaces the whole callback body when set (a bad payload).
	Body any
}

// Item is one element of a mixed message.
type Item struct {
	Text  string
	Image *Resource
}

// Resource is an encrypted file the peer serves.
type Resource struct {
	URL    string `json:"url"`
	AESKey string `json:"aeskey"`
	Name   string `json:"name,omitempty"`
}

// Mention is how a group message addresses the bot: WeCom pushes a group
// message to the bot only when it @-mentions it.
const Mention = "@" + BotName

// Say delivers a message as WeCom would and returns the callback's req_id
// and the message id; a group message without Mention is not delivered
// (req_id ""), as WeCom does not push it to the bot.
func (p *Peer) Say(m Message) (reqID, msgID string) {
	p.t.Helper()
	if m.ChatID != "" && !mentions(m) {
		return "", ""
	}
	if m.MsgID == "" {
		m.MsgID = p.id("msg")
	}
	reqID = p.id("req")
	p.push("aibot_msg_callback", reqID, p.body(m))
	return reqID, m.MsgID
}

func mentions(m Message) bool {
	if strings.Contains(m.Text, Mention) {
		return true
	}
	for _, it := range m.Items {
		if strings.Contains(it.Text, Mention) {
			return true
		}
	}
	return false
}

func (p *Peer) body(m Message) any {
	if m.Body != nil {
		return m.Body
	}
	kind := m.MsgType
	if kind == "" {
		kind = "text"
	}
	b := map[string]any{"msgid": m.MsgID, "aibotid": BotID, "chattype": "single",
		"from": map[string]string{"userid": m.From}, "msgtype": kind, "create_time": time.Now().Unix()}
	if m.ChatID != "" {
		b["chattype"], b["chatid"] = "group", m.ChatID
	}
	switch kind {
	case "text":
		b["text"] = map[string]string{"content": m.Text}
	case "voice":
		b["voice"] = map[string]string{"content": m.Voice}
	case "image":
		b["image"] = m.Image
	case "file":
		b["file"] = m.File
	case "mixed":
		var items []map[string]any
		for _, it := range m.Items {
			if it.Image != nil {
				items = append(items, map[string]any{"msgtype": "image", "image": it.Image})
				continue
			}
			items = append(items, map[string]any{"msgtype": "text", "text": map[string]string{"content": it.Text}})
		}
		b["mixed"] = map[string]any{"msg_item": items}
	}
	return b
}

// Redeliver pushes a message again, on a new req_id, with the same msgid.
func (p *Peer) Redeliver(m Message, msgID string) string {
	m.MsgID = msgID
	reqID := p.id("req")
	p.push("aibot_msg_callback", reqID, p.body(m))
	return reqID
}

// EnterChat tells the bot a user opened its chat; it returns the req_id a
// welcome message answers.
func (p *Peer) EnterChat(user string) string {
	reqID := p.id("req")
	p.push("aibot_event_callback", reqID, map[string]any{"msgid": p.id("ev"), "aibotid": BotID,
		"from": map[string]string{"userid": user}, "msgtype": "event", "create_time": time.Now().Unix(),
		"event": map[string]string{"eventtype": "enter_chat"}})
	return reqID
}

// Welcomes are the welcome texts sent on a req_id.
func (p *Peer) Welcomes(reqID string) []string {
	var out []string
	for _, s := range p.Sent() {
		if s.Cmd != "aibot_respond_welcome_msg" || s.ReqID != reqID {
			continue
		}
		var b struct {
			Text struct {
				Content string `json:"content"`
			} `json:"text"`
		}
		if json.Unmarshal(s.Body, &b) == nil {
			out = append(out, b.Text.Content)
		}
	}
	return out
}

// AddFile serves data encrypted as WeCom does (AES-256-CBC, a fresh key,
// its first 16 bytes the IV, PKCS#7 to 32 bytes) and returns the resource
// a callback carries.
func (p *Peer) AddFile(name string, data []byte) *Resource {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	pad := 32 - len(data)%32
	plain := append(append([]byte(nil), data...), make([]byte, pad)...)
	for i := len(data); i < len(plain); i++ {
		plain[i] = byte(pad)
	}
	block, _ := aes.NewCipher(key)
	sealed := make([]byte, len(plain))
	cipher.NewCBCEncrypter(block, key[:16]).CryptBlocks(sealed, plain)
	path := "/files/" + p.id("f")
	p.files.Add(path, sealed, http.Header{"Content-Disposition": {"attachment; filename*=UTF-8''" + url.PathEscape(name)}})
	return &Resource{URL: p.srv.URL + path, AESKey: base64.StdEncoding.EncodeToString(key)}
}

// upload plays the three upload steps; it answers the other commands with
// errcode 0 and no body. The caller holds p.mu.
func (p *Peer) upload(f frame) (body any, code int, msg string) {
	switch f.Cmd {
	case "aibot_upload_media_init":
		var b struct {
			Type        string `json:"type"`
			Filename    string `json:"filename"`
			TotalChunks int    `json:"total_chunks"`
			MD5         string `json:"md5"`
		}
		_ = json.Unmarshal(f.Body, &b)
		p.next++
		id := "up" + itoa(p.next)
		p.uploads[id] = &Upload{Type: b.Type, Filename: b.Filename, MD5: b.MD5}
		return map[string]string{"upload_id": id}, 0, ""
	case "aibot_upload_media_chunk":
		var b struct {
			UploadID string `json:"upload_id"`
			Data     string `json:"base64_data"`
		}
		_ = json.Unmarshal(f.Body, &b)
		u := p.uploads[b.UploadID]
		data, err := base64.StdEncoding.DecodeString(b.Data)
		if u == nil || err != nil {
			return nil, 40058, "invalid upload_id or chunk"
		}
		u.Data = append(u.Data, data...)
		return nil, 0, ""
	case "aibot_upload_media_finish":
		var b struct {
			UploadID string `json:"upload_id"`
		}
		_ = json.Unmarshal(f.Body, &b)
		u := p.uploads[b.UploadID]
		if u == nil {
			return nil, 40058, "invalid upload_id"
		}
		p.next++
		u.MediaID = "media" + itoa(p.next)
		p.done = append(p.done, u)
		return map[string]string{"media_id": u.MediaID}, 0, ""
	}
	return nil, 0, ""
}

// Uploads are the files uploaded to the end.
func (p *Peer) Uploads() []Upload {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Upload
	for _, u := range p.done {
		out = append(out, *u)
	}
	return out
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
