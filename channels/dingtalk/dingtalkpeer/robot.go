package dingtalkpeer

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"
)

// User is a member of the organisation.
type User struct {
	StaffID string
	Nick    string
}

// Incoming is a message a user sends the robot.
type Incoming struct {
	// MsgID is the message's id; "" makes a new one (the same id again is a redelivery).
	MsgID string
	From  User
	// Group is the conversation id of a group; "" for a direct chat.
	Group string
	// AtRobot @-mentions the robot (isInAtList).
	AtRobot bool
	// MsgType is "text" unless set ("picture", "richText", "audio", "file").
	MsgType string
	Text    string
	// Content is the msgtype's content object.
	Content map[string]any
	// WebhookValid is how long the sessionWebhook lasts (0: an hour; <0: expired).
	WebhookValid time.Duration
}

// Say pushes a robot message as DingTalk does and returns its msgId.
func (p *Peer) Say(in Incoming) string {
	if in.MsgID == "" {
		in.MsgID = p.id("msg")
	}
	chat, convType, conv := in.From.StaffID, "1", "cid-dm-"+in.From.StaffID
	if in.Group != "" {
		chat, convType, conv = "group:"+in.Group, "2", in.Group
	}
	session := p.id("session-")
	p.mu.Lock()
	p.sessions[session] = chat
	p.mu.Unlock()
	valid := in.WebhookValid
	if valid == 0 {
		valid = time.Hour
	}
	msgType := in.MsgType
	if msgType == "" {
		msgType = "text"
	}
	now := time.Now()
	m := map[string]any{
		"msgId": in.MsgID, "msgtype": msgType, "conversationId": conv, "conversationType": convType,
		"conversationTitle": "", "senderId": "$:LWCP_v1:$" + in.From.StaffID, "senderStaffId": in.From.StaffID,
		"senderNick": in.From.Nick, "chatbotUserId": RobotUserID, "robotCode": ClientID, "isAdmin": false,
		"sessionWebhook":            p.srv.URL + "/robot/sendBySession?session=" + session,
		"sessionWebhookExpiredTime": now.Add(valid).UnixMilli(), "createAt": now.UnixMilli(),
	}
	if in.Group != "" {
		m["isInAtList"] = in.AtRobot
		m["conversationTitle"] = "Team " + in.Group
		if in.AtRobot {
			m["atUsers"] = []map[string]string{{"dingtalkId": RobotUserID}}
		}
	}
	if msgType == "text" || in.Text != "" {
		m["text"] = map[string]string{"content": in.Text}
	}
	if in.Content != nil {
		m["content"] = in.Content
	}
	data, _ := json.Marshal(m)
	p.Push(Callback, TopicRobot, string(data))
	return in.MsgID
}

// What batchSend says of a user it did not reach.
const (
	userInvalid        = "invalid"
	userFlowControlled = "flowControlled"
)

// InvalidUser makes batchSend list staffID in invalidStaffIdList.
func (p *Peer) InvalidUser(staffID string) { p.markUser(staffID, userInvalid) }

// FlowControl makes batchSend list staffID in flowControlledStaffIdList.
func (p *Peer) FlowControl(staffID string) { p.markUser(staffID, userFlowControlled) }

func (p *Peer) markUser(staffID, state string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.users[staffID] = state
}

// accessToken issues a token for the app's appKey and appSecret.
func (p *Peer) accessToken(w http.ResponseWriter, r *http.Request) {
	if p.failed(w, r) {
		return
	}
	var req struct{ AppKey, AppSecret string }
	_ = json.NewDecoder(r.Body).Decode(&req)
	if req.AppKey != ClientID || req.AppSecret != ClientSecret {
		writeJSON(w, 400, map[string]string{"code": "invalidClientIdOrSecret", "message": "无效的clientId或者clientSecret"})
		return
	}
	tok := p.id("peer-access-token-")
	p.mu.Lock()
	p.tokens[tok] = true
	p.stats.Tokens++
	exp := p.expireIn
	p.mu.Unlock()
	writeJSON(w, 200, map[string]any{"accessToken": tok, "expireIn": exp})
}

// authorized checks the v1.0 token header, answering 401 when it is unknown.
func (p *Peer) authorized(w http.ResponseWriter, token string) bool {
	p.mu.Lock()
	ok := p.tokens[token]
	p.mu.Unlock()
	if !ok {
		writeJSON(w, 401, map[string]string{"code": "InvalidAuthentication", "message": "不合法的access_token"})
	}
	return ok
}

// robotSend is oToMessages/batchSend and groupMessages/send.
func (p *Peer) robotSend(w http.ResponseWriter, r *http.Request) {
	if p.failed(w, r) || !p.authorized(w, r.Header.Get("x-acs-dingtalk-access-token")) {
		return
	}
	var req struct {
		RobotCode          string   `json:"robotCode"`
		UserIDs            []string `json:"userIds"`
		OpenConversationID string   `json:"openConversationId"`
		MsgKey             string   `json:"msgKey"`
		MsgParam           string   `json:"msgParam"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.RobotCode != ClientID {
		writeJSON(w, 400, map[string]string{"code": "InvalidParameter", "message": "bad request or robotCode"})
		return
	}
	var param map[string]string
	if err := json.Unmarshal([]byte(req.MsgParam), &param); err != nil {
		writeJSON(w, 400, map[string]string{"code": "InvalidParameter.msgParam", "message": err.Error()})
		return
	}
	chat := ""
	if strings.HasSuffix(r.URL.Path, "/groupMessages/send") {
		chat = "group:" + req.OpenConversationID
	} else if len(req.UserIDs) == 1 {
		chat = req.UserIDs[0]
	}
	if chat == "" || chat == "group:" {
		writeJSON(w, 400, map[string]string{"code": "InvalidParameter", "message": "no receiver"})
		return
	}
	invalid, limited := []string{}, []string{}
	p.mu.Lock()
	switch p.users[chat] {
	case userInvalid:
		invalid = append(invalid, chat)
	case userFlowControlled:
		limited = append(limited, chat)
	}
	p.mu.Unlock()
	if len(invalid)+len(limited) == 0 {
		p.record(Sent{Via: "api", ChatID: chat, MsgKey: req.MsgKey, Title: param["title"], Text: param["text"], Param: param})
	}
	writeJSON(w, 200, map[string]any{"processQueryKey": p.id("pqk-"), "invalidStaffIdList": invalid, "flowControlledStaffIdList": limited})
}

// webhook is a message's sessionWebhook: it answers that message's chat.
func (p *Peer) webhook(w http.ResponseWriter, r *http.Request) {
	if p.failed(w, r) {
		return
	}
	p.mu.Lock()
	chat, ok := p.sessions[r.URL.Query().Get("session")]
	p.mu.Unlock()
	if !ok {
		writeJSON(w, 200, map[string]any{"errcode": 300001, "errmsg": "session not found"})
		return
	}
	var req struct {
		MsgType  string            `json:"msgtype"`
		Markdown map[string]string `json:"markdown"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.MsgType != "markdown" {
		writeJSON(w, 200, map[string]any{"errcode": 40035, "errmsg": "缺少参数 msgtype"})
		return
	}
	p.record(Sent{Via: "webhook", ChatID: chat, MsgKey: "markdown", Title: req.Markdown["title"], Text: req.Markdown["text"], Param: req.Markdown})
	writeJSON(w, 200, map[string]any{"errcode": 0, "errmsg": "ok"})
}

func (p *Peer) record(s Sent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = append(p.sent, s)
}

// downloadURL exchanges a download code for a URL.
func (p *Peer) downloadURL(w http.ResponseWriter, r *http.Request) {
	if p.failed(w, r) || !p.authorized(w, r.Header.Get("x-acs-dingtalk-access-token")) {
		return
	}
	var req struct{ DownloadCode, RobotCode string }
	_ = json.NewDecoder(r.Body).Decode(&req)
	p.mu.Lock()
	p.stats.Downloads++
	_, ok := p.files[req.DownloadCode]
	p.mu.Unlock()
	if !ok || req.RobotCode != ClientID {
		writeJSON(w, 400, map[string]string{"code": "InvalidParameter.downloadCode", "message": "unknown downloadCode"})
		return
	}
	writeJSON(w, 200, map[string]string{"downloadUrl": p.srv.URL + "/files/" + req.DownloadCode + "?Signature=peer"})
}

func (p *Peer) file(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	data, ok := p.files[r.PathValue("code")]
	p.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	_, _ = w.Write(data)
}

// upload is media/upload: the token in the query, the file in "media".
func (p *Peer) upload(w http.ResponseWriter, r *http.Request) {
	if p.failed(w, r) {
		return
	}
	p.mu.Lock()
	ok := p.tokens[r.URL.Query().Get("access_token")]
	p.mu.Unlock()
	if !ok {
		writeJSON(w, 200, map[string]any{"errcode": 40014, "errmsg": "不合法的access_token"})
		return
	}
	f, h, err := r.FormFile("media")
	if err != nil {
		writeJSON(w, 200, map[string]any{"errcode": 40004, "errmsg": "media is missing"})
		return
	}
	defer f.Close()
	data, _ := io.ReadAll(f)
	id := p.id("@media-")
	p.mu.Lock()
	p.uploads = append(p.uploads, Upload{Type: r.URL.Query().Get("type"), Name: h.Filename, MediaID: id, Data: data})
	p.mu.Unlock()
	writeJSON(w, 200, map[string]any{"errcode": 0, "errmsg": "ok", "type": r.URL.Query().Get("type"), "media_id": id, "created_at": time.Now().UnixMilli()})
}
