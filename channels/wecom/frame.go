package wecom

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"
)

// The AI bot long connection (WeCom developer documentation, "智能机器人
// 长连接"): JSON text frames {cmd, headers: {req_id}, body}. The bot
// subscribes with its id and secret, pings every 30 s, gets callbacks and
// answers them with the callback's req_id; every frame it sends is
// acknowledged by a frame without cmd carrying the same req_id and an
// errcode.

// Commands the bot sends.
const (
	cmdSubscribe      = "aibot_subscribe"
	cmdPing           = "ping"
	cmdRespond        = "aibot_respond_msg"
	cmdRespondWelcome = "aibot_respond_welcome_msg"
	cmdSend           = "aibot_send_msg"
	cmdUploadInit     = "aibot_upload_media_init"
	cmdUploadChunk    = "aibot_upload_media_chunk"
	cmdUploadFinish   = "aibot_upload_media_finish"
)

// Commands WeCom sends.
const (
	cmdMsgCallback   = "aibot_msg_callback"
	cmdEventCallback = "aibot_event_callback"
)

// Event types of aibot_event_callback.
const (
	eventEnterChat    = "enter_chat"
	eventDisconnected = "disconnected_event" // a newer connection of the bot took over
)

// heartbeatEvery is the SDK's heartbeat_interval; two pings unanswered and
// the connection is taken for dead.
const (
	heartbeatEvery  = 30 * time.Second
	maxMissedPongs  = 2
	ackTimeout      = 10 * time.Second
	welcomeDeadline = 5 * time.Second // WeCom takes a welcome within 5 s of enter_chat
)

// frame is one message on the socket, either way.
type frame struct {
	Cmd     string          `json:"cmd,omitempty"`
	Headers headers         `json:"headers"`
	Body    json.RawMessage `json:"body,omitempty"`
	ErrCode *int            `json:"errcode,omitempty"`
	ErrMsg  string          `json:"errmsg,omitempty"`
}

type headers struct {
	ReqID string `json:"req_id"`
}

// code is the frame's errcode (-1 when an acknowledgement lacks one).
func (f frame) code() int {
	if f.ErrCode == nil {
		return -1
	}
	return *f.ErrCode
}

// newReqID is the SDK's request id: {prefix}_{unix ms}_{random}.
func newReqID(prefix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return prefix + "_" + strconv.FormatInt(time.Now().UnixMilli(), 10) + "_" + hex.EncodeToString(b[:])
}

// subscribeBody authenticates the connection.
type subscribeBody struct {
	BotID  string `json:"bot_id"`
	Secret string `json:"secret"`
}

// callback is the body of aibot_msg_callback and aibot_event_callback.
type callback struct {
	MsgID    string `json:"msgid"`
	AIBotID  string `json:"aibotid"`
	ChatID   string `json:"chatid"`   // group chats only; a DM's chat is the sender
	ChatType string `json:"chattype"` // "single" or "group"
	From     struct {
		UserID string `json:"userid"`
	} `json:"from"`
	CreateTime int64      `json:"create_time"`
	MsgType    string     `json:"msgtype"`
	Text       *content   `json:"text,omitempty"`
	Voice      *content   `json:"voice,omitempty"` // WeCom's transcription
	Image      *resource  `json:"image,omitempty"`
	File       *resource  `json:"file,omitempty"`
	Mixed      *mixed     `json:"mixed,omitempty"`
	Event      *eventInfo `json:"event,omitempty"`
}

type content struct {
	Content string `json:"content"`
}

// resource is an encrypted file: its URL and the AES-256 key it is encrypted with.
type resource struct {
	URL    string `json:"url"`
	AESKey string `json:"aeskey"`
	Name   string `json:"name,omitempty"`
}

type mixed struct {
	Items []mixedItem `json:"msg_item"`
}

type mixedItem struct {
	MsgType string    `json:"msgtype"`
	Text    *content  `json:"text,omitempty"`
	Image   *resource `json:"image,omitempty"`
}

type eventInfo struct {
	EventType string `json:"eventtype"`
}

// Chat types.
const (
	chatSingle = "single"
	chatGroup  = "group"
)

// streamBody is a reply drawn as a stream: the same id shows the latest
// content, finish closes it (WeCom wants it closed within 6 minutes).
type streamBody struct {
	MsgType string `json:"msgtype"` // "stream"
	Stream  stream `json:"stream"`
}

type stream struct {
	ID      string `json:"id"`
	Finish  bool   `json:"finish"`
	Content string `json:"content"`
}

// textBody is the welcome message (aibot_respond_welcome_msg).
type textBody struct {
	MsgType string  `json:"msgtype"` // "text"
	Text    content `json:"text"`
}

// sendBody is a proactive message (aibot_send_msg): Markdown to a chat
// (a user's userid or a group's chatid).
type sendBody struct {
	ChatID   string   `json:"chatid,omitempty"`
	MsgType  string   `json:"msgtype"` // "markdown"
	Markdown *content `json:"markdown,omitempty"`
}

// mediaBody is an uploaded file sent as a reply or proactively:
// {"msgtype": "image", "image": {"media_id": …}}.
func mediaBody(chatID, kind, mediaID string) map[string]any {
	b := map[string]any{"msgtype": kind, kind: map[string]string{"media_id": mediaID}}
	if chatID != "" {
		b["chatid"] = chatID
	}
	return b
}

// uploadInit starts an upload of total_chunks base64 chunks.
type uploadInit struct {
	Type        string `json:"type"`
	Filename    string `json:"filename"`
	TotalSize   int    `json:"total_size"`
	TotalChunks int    `json:"total_chunks"`
	MD5         string `json:"md5"`
}

type uploadChunk struct {
	UploadID   string `json:"upload_id"`
	ChunkIndex int    `json:"chunk_index"`
	Base64Data string `json:"base64_data"`
}

type uploadFinish struct {
	UploadID string `json:"upload_id"`
}

// uploadAnswer is the body of an upload step's acknowledgement.
type uploadAnswer struct {
	UploadID string `json:"upload_id"`
	MediaID  string `json:"media_id"`
}
