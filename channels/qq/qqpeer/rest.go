package qqpeer

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// apiError is QQ's JSON error body.
func apiError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, map[string]any{"message": msg, "code": code, "err_code": code, "trace_id": "peer-trace"})
}

// rest serves GET /gateway, GET /users/@me and the /v2 message and file endpoints.
func (p *Peer) rest(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	path := r.URL.Path
	p.Record(Call{Method: r.Method, Path: path, Auth: r.Header.Get("Authorization"), Body: raw})
	p.mu.Lock()
	valid := p.validLocked(r.Header.Get("Authorization"))
	if !valid {
		p.stats.Unauthorized++
	}
	p.mu.Unlock()
	fail, failed := p.failures.Take(r.Method, path)
	if !valid {
		apiError(w, http.StatusUnauthorized, 11244, "token not exist or expire")
		return
	}
	if failed {
		fail.Write(w)
		return
	}
	seg := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case r.Method == http.MethodGet && path == "/gateway":
		writeJSON(w, http.StatusOK, map[string]any{"url": p.wsURL()})
	case r.Method == http.MethodGet && path == "/users/@me":
		writeJSON(w, http.StatusOK, map[string]any{"id": BotID, "username": BotName, "avatar": "", "union_openid": "", "union_user_account": ""})
	case r.Method == http.MethodPost && len(seg) == 4 && seg[0] == "v2" && (seg[1] == "users" || seg[1] == "groups"):
		group := seg[1] == "groups"
		switch seg[3] {
		case "messages":
			p.postMessage(w, group, seg[2], raw)
		case "files":
			p.upload(w, group, seg[2], raw)
		default:
			apiError(w, http.StatusNotFound, 404, "not found")
		}
	default:
		p.t.Errorf("qqpeer: the bot called %s %s, which QQ does not serve", r.Method, path)
		apiError(w, http.StatusNotFound, 404, "not found")
	}
}

// postMessage records a message; a msg_seq used before for its msg_id is
// refused as QQ does (40054005), a reply without msg_seq too.
func (p *Peer) postMessage(w http.ResponseWriter, group bool, chat string, raw []byte) {
	var in struct {
		MsgType  int    `json:"msg_type"`
		Content  string `json:"content"`
		MsgID    string `json:"msg_id"`
		MsgSeq   int    `json:"msg_seq"`
		Markdown *struct {
			Content string `json:"content"`
		} `json:"markdown"`
		Media *struct {
			FileInfo string `json:"file_info"`
		} `json:"media"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		apiError(w, http.StatusBadRequest, 40034001, "bad json: "+err.Error())
		return
	}
	m := Message{Group: group, ChatID: chat, MsgType: in.MsgType, Content: in.Content, MsgID: in.MsgID, MsgSeq: in.MsgSeq}
	switch in.MsgType {
	case 0:
	case 2:
		if in.Markdown == nil {
			apiError(w, http.StatusBadRequest, 40034002, "markdown missing")
			return
		}
		m.Content = in.Markdown.Content
	case 7:
		if in.Media == nil || in.Media.FileInfo == "" {
			apiError(w, http.StatusBadRequest, 40034003, "media missing")
			return
		}
		m.FileInfo = in.Media.FileInfo
	default:
		apiError(w, http.StatusBadRequest, 40034004, fmt.Sprintf("msg_type %d not served", in.MsgType))
		return
	}
	p.mu.Lock()
	key := fmt.Sprintf("%s#%d", in.MsgID, in.MsgSeq)
	if in.MsgID != "" && (in.MsgSeq == 0 || p.seqsUsed[key]) {
		p.mu.Unlock()
		apiError(w, http.StatusBadRequest, 40054005, "消息被去重，请检查请求msgseq")
		return
	}
	p.seqsUsed[key] = true
	p.messages = append(p.messages, m)
	id := p.idLocked()
	p.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "timestamp": "2026-01-01T00:00:00+08:00"})
}

// upload records a rich-media upload and answers its file_info.
func (p *Peer) upload(w http.ResponseWriter, group bool, chat string, raw []byte) {
	var in struct {
		FileType   int    `json:"file_type"`
		URL        string `json:"url"`
		FileData   string `json:"file_data"`
		FileName   string `json:"file_name"`
		SrvSendMsg bool   `json:"srv_send_msg"`
	}
	if err := json.Unmarshal(raw, &in); err != nil || (in.URL == "" && in.FileData == "") {
		apiError(w, http.StatusBadRequest, 40034005, "file missing")
		return
	}
	data, err := base64.StdEncoding.DecodeString(in.FileData)
	if err != nil {
		apiError(w, http.StatusBadRequest, 40034006, "file_data is not base64")
		return
	}
	p.mu.Lock()
	p.uploads = append(p.uploads, Upload{Group: group, ChatID: chat, FileType: in.FileType, FileName: in.FileName, URL: in.URL, Data: data})
	info := fmt.Sprintf("peer-file-info-%d", len(p.uploads))
	p.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"file_uuid": "uuid", "file_info": info, "ttl": 3600})
}
