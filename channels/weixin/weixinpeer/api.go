package weixinpeer

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// expired is WeChat's answer to a stale bot token.
var expired = map[string]any{"ret": -14, "errcode": -14, "errmsg": "session timeout"}

func (p *Peer) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.Trim(r.URL.Path, "/")
	endpoint := path[strings.LastIndex(path, "/")+1:]
	body, _ := io.ReadAll(r.Body)
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	p.mu.Lock()
	p.calls[endpoint]++
	if tag := r.Header.Get("SKRouteTag"); tag != "" {
		p.routeTags[tag]++
	}
	status := 0
	if f := p.fail[endpoint]; len(f) > 0 {
		status, p.fail[endpoint] = f[0], f[1:]
	}
	current := p.token
	p.mu.Unlock()
	if status != 0 {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{"errmsg":"injected failure"}`)
		return
	}
	if path == "c2c/upload" {
		p.upload(w, r, body)
		return
	}
	if strings.HasPrefix(path, "c2c/") {
		p.download(w, r)
		return
	}
	if r.Header.Get("AuthorizationType") != "ilink_bot_token" || r.Header.Get("X-WECHAT-UIN") == "" {
		http.Error(w, "missing iLink headers", http.StatusBadRequest)
		return
	}
	var req map[string]json.RawMessage
	if r.Method == http.MethodPost {
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
	}
	switch endpoint {
	case "get_bot_qrcode":
		p.mu.Lock()
		p.qrs++
		n := p.qrs
		p.mu.Unlock()
		writeJSON(w, map[string]any{"ret": 0, "qrcode": "qr-" + strconv.Itoa(n),
			"qrcode_img_content": "https://liteapp.weixin.example/q/qr-" + strconv.Itoa(n)})
		return
	case "get_qrcode_status":
		p.mu.Lock()
		done := p.scanned
		p.scanned = false
		tok := p.token
		p.mu.Unlock()
		if !done {
			writeJSON(w, map[string]any{"ret": 0, "status": "wait"})
			return
		}
		writeJSON(w, map[string]any{"ret": 0, "status": "confirmed", "bot_token": tok, "ilink_bot_id": BotID,
			"baseurl": p.URL(), "ilink_user_id": Scaner})
		return
	}
	if token != current {
		writeJSON(w, expired)
		return
	}
	switch endpoint {
	case "getupdates":
		var buf string
		_ = json.Unmarshal(req["get_updates_buf"], &buf)
		p.getUpdates(w, r, buf, token)
	case "sendmessage":
		p.sendMessage(w, req["msg"])
	case "getconfig":
		var user string
		_ = json.Unmarshal(req["ilink_user_id"], &user)
		answer := map[string]any{"ret": 0, "typing_ticket": "ticket-" + user}
		var ctxToken string
		if json.Unmarshal(req["context_token"], &ctxToken) == nil && ctxToken != "" {
			answer["context_token"] = "ctx-" + user + "-refreshed"
		}
		writeJSON(w, answer)
	case "sendtyping":
		var t struct {
			User   string `json:"ilink_user_id"`
			Ticket string `json:"typing_ticket"`
			Status int    `json:"status"`
		}
		_ = json.Unmarshal(body, &t)
		p.mu.Lock()
		p.typing = append(p.typing, Typing(t))
		p.mu.Unlock()
		writeJSON(w, map[string]any{"ret": 0})
	case "getuploadurl":
		var u struct {
			FileKey string `json:"filekey"`
			AESKey  string `json:"aeskey"`
		}
		_ = json.Unmarshal(body, &u)
		if u.FileKey == "" || len(u.AESKey) != 32 {
			writeJSON(w, map[string]any{"ret": -3, "errmsg": "filekey and aeskey required"})
			return
		}
		p.mu.Lock()
		p.keys[u.FileKey] = u.AESKey
		p.mu.Unlock()
		writeJSON(w, map[string]any{"ret": 0, "upload_param": "up-" + u.FileKey})
	case "notifystart", "notifystop":
		writeJSON(w, map[string]any{"ret": 0})
	default:
		http.NotFound(w, r)
	}
}

// getUpdates answers the messages after the cursor, waiting up to Hold for one.
func (p *Peer) getUpdates(w http.ResponseWriter, r *http.Request, buf, token string) {
	from := fromCursor(buf)
	p.mu.Lock()
	p.polls = append(p.polls, Poll{Buf: buf, Token: token})
	hold := p.Hold
	p.mu.Unlock()
	deadline := time.After(hold)
	for {
		p.mu.Lock()
		if from > len(p.msgs) {
			from = len(p.msgs)
		}
		msgs := append([]json.RawMessage{}, p.msgs[from:]...)
		next, wake := len(p.msgs), p.wake
		p.mu.Unlock()
		if len(msgs) > 0 {
			writeJSON(w, map[string]any{"ret": 0, "msgs": msgs, "get_updates_buf": cursor(next)})
			return
		}
		select {
		case <-wake:
		case <-deadline:
			writeJSON(w, map[string]any{"ret": 0, "msgs": []any{}, "get_updates_buf": cursor(next)})
			return
		case <-r.Context().Done():
			return
		}
	}
}

func (p *Peer) sendMessage(w http.ResponseWriter, raw json.RawMessage) {
	var m struct {
		To           string            `json:"to_user_id"`
		ClientID     string            `json:"client_id"`
		ContextToken string            `json:"context_token"`
		MessageType  int               `json:"message_type"`
		Items        []json.RawMessage `json:"item_list"`
	}
	if err := json.Unmarshal(raw, &m); err != nil || m.To == "" || m.MessageType != 2 {
		writeJSON(w, map[string]any{"ret": -3, "errmsg": "invalid argument"})
		return
	}
	if m.ContextToken != "ctx-"+m.To && !strings.HasPrefix(m.ContextToken, "ctx-"+m.To+"-") {
		writeJSON(w, map[string]any{"ret": -2, "errmsg": "context token invalid"})
		return
	}
	s := Sent{To: m.To, ClientID: m.ClientID, ContextToken: m.ContextToken, Items: m.Items}
	for _, it := range m.Items {
		var item struct {
			Type int `json:"type"`
			Text struct {
				Text string `json:"text"`
			} `json:"text_item"`
		}
		if json.Unmarshal(it, &item) == nil && item.Type == 1 {
			s.Text += item.Text.Text
		}
	}
	p.mu.Lock()
	for _, it := range m.Items {
		if f, ok := p.sentFile(it); ok {
			s.Files = append(s.Files, f)
		}
	}
	p.sent = append(p.sent, s)
	p.mu.Unlock()
	writeJSON(w, map[string]any{"ret": 0})
}

// download is the CDN: the encrypted bytes of a stored medium.
func (p *Peer) download(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	data, ok := p.media[r.URL.Query().Get("encrypted_query_param")]
	p.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	_, _ = w.Write(data)
}

// upload is the CDN's upload: the bytes must decrypt with the key
// getuploadurl was given; the answer names the download param.
func (p *Peer) upload(w http.ResponseWriter, r *http.Request, body []byte) {
	fileKey := r.URL.Query().Get("filekey")
	p.mu.Lock()
	defer p.mu.Unlock()
	keyHex, ok := p.keys[fileKey]
	if !ok || r.URL.Query().Get("encrypted_query_param") != "up-"+fileKey {
		http.Error(w, "unknown upload", http.StatusBadRequest)
		return
	}
	key, _ := hex.DecodeString(keyHex)
	data, ok := decryptECB(body, key)
	if !ok {
		http.Error(w, "not encrypted with the announced key", http.StatusBadRequest)
		return
	}
	param := "dl-" + fileKey
	p.uploads[param] = upload{data: data, keyHex: keyHex}
	w.Header().Set("x-encrypted-param", param)
	w.WriteHeader(http.StatusOK)
}

// sentFile is the upload a sent media item points at, if its key matches.
func (p *Peer) sentFile(raw json.RawMessage) (File, bool) {
	var it map[string]json.RawMessage
	if json.Unmarshal(raw, &it) != nil {
		return File{}, false
	}
	var typ int
	_ = json.Unmarshal(it["type"], &typ)
	for _, k := range []string{"image_item", "voice_item", "file_item", "video_item"} {
		var m struct {
			Media struct {
				Param  string `json:"encrypt_query_param"`
				AESKey string `json:"aes_key"`
			} `json:"media"`
			FileName string `json:"file_name"`
		}
		if it[k] == nil || json.Unmarshal(it[k], &m) != nil {
			continue
		}
		up, ok := p.uploads[m.Media.Param]
		key, _ := base64.StdEncoding.DecodeString(m.Media.AESKey)
		if !ok || string(key) != up.keyHex {
			return File{}, false
		}
		return File{Type: typ, Name: m.FileName, Data: up.data}, true
	}
	return File{}, false
}
