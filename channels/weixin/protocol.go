package weixin

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
)

// The iLink bot API, as nanobot speaks it (after @tencent-weixin/openclaw-weixin 2.4.6).

// Endpoints, relative to the base URL.
const (
	epGetQRCode   = "ilink/bot/get_bot_qrcode?bot_type=3"
	epQRStatus    = "ilink/bot/get_qrcode_status"
	epGetUpdates  = "ilink/bot/getupdates"
	epSendMessage = "ilink/bot/sendmessage"
	epGetConfig   = "ilink/bot/getconfig"
	epSendTyping  = "ilink/bot/sendtyping"
	epNotifyStart = "ilink/bot/msg/notifystart"
	epNotifyStop  = "ilink/bot/msg/notifystop"
)

// Message item types (MessageItemType).
const (
	itemText  = 1
	itemImage = 2
	itemVoice = 3
	itemFile  = 4
	itemVideo = 5
)

// Message types and states.
const (
	messageTypeBot     = 2
	messageStateFinish = 2
)

// Typing statuses.
const (
	typingOn     = 1
	typingCancel = 2
)

// Business error codes.
const (
	errContextRestricted = -2  // context token expired, quota used up
	errInvalidArgument   = -3  // get_bot_qrcode refusing the local tokens
	errSessionExpired    = -14 // the bot token is stale: log in again
)

// channelVersion and clientVersion are what nanobot announces itself as.
const (
	channelVersion = "2.4.6"
	clientVersion  = 2<<16 | 4<<8 | 6 // 0x00MMNNPP
	appID          = "bot"
)

// baseInfo goes into every POST body but the QR request.
var baseInfo = map[string]string{"channel_version": channelVersion, "bot_agent": "nanobot (go)"}

// answered tells whether err is WeChat's answer carrying code in ret or errcode.
func answered(err error, code int) bool {
	var he *channels.HTTPError
	if !errors.As(err, &he) || he.Code == "" {
		return false
	}
	var env envelope
	_ = json.Unmarshal(he.Body, &env)
	return int(env.Ret) == code || int(env.Errcode) == code
}

// sessionExpired tells whether err is WeChat saying the login is over.
func sessionExpired(err error) bool { return answered(err, errSessionExpired) }

// envelope is the status part of every answer.
type envelope struct {
	Ret     flexInt `json:"ret"`
	Errcode flexInt `json:"errcode"`
	Errmsg  string  `json:"errmsg"`
}

// flexInt reads a number sent as a number or a string.
type flexInt int

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*f = 0
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("not an integer: %s", b)
	}
	*f = flexInt(n)
	return nil
}

// flexID reads an id sent as a number or a string.
type flexID string

func (f *flexID) UnmarshalJSON(b []byte) error {
	*f = flexID(strings.Trim(string(b), `"`))
	if *f == "null" {
		*f = ""
	}
	return nil
}

// client calls the API with one bot token; a refusal comes back as the
// *channels.HTTPError itself, for the caller to judge (a send, a poll and
// the login each treat WeChat's codes their own way).
type client struct{ channels.API }

func newClient(h *http.Client, base, token, routeTag string) *client {
	return &client{channels.API{
		Name: Name, Base: strings.TrimRight(base, "/") + "/", HTTP: h, Token: token,
		Header:   func(h http.Header) { iLinkHeaders(h, routeTag) },
		Envelope: envelopeCode,
		Judge:    func(e *channels.HTTPError) error { return e },
	}}
}

// at is the client calling another host (a QR scan redirected).
func (c *client) at(base string) *client {
	other := *c
	other.Base = strings.TrimRight(base, "/") + "/"
	return &other
}

// iLinkHeaders are nanobot's per-request headers: a fresh X-WECHAT-UIN each call.
func iLinkHeaders(h http.Header, routeTag string) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	uin := strconv.FormatUint(uint64(binary.BigEndian.Uint32(b[:])), 10)
	h.Set("X-WECHAT-UIN", base64.StdEncoding.EncodeToString([]byte(uin)))
	h.Set("Content-Type", "application/json")
	h.Set("AuthorizationType", "ilink_bot_token")
	h.Set("iLink-App-Id", appID)
	h.Set("iLink-App-ClientVersion", strconv.Itoa(clientVersion))
	if routeTag != "" {
		h.Set("SKRouteTag", routeTag)
	}
}

// envelopeCode is an answer's non-zero errcode, else its ret ("": none).
func envelopeCode(_ int, body []byte) (string, bool) {
	var env envelope
	if json.Unmarshal(body, &env) != nil || env.Ret == 0 && env.Errcode == 0 {
		return "", false
	}
	return strconv.Itoa(int(cmp.Or(env.Errcode, env.Ret))), false
}

// post is a POST with base_info in the body.
func (c *client) post(ctx context.Context, endpoint string, body map[string]any, out any) error {
	if body == nil {
		body = map[string]any{}
	}
	body["base_info"] = baseInfo
	return c.Call(ctx, http.MethodPost, endpoint, body, out)
}

// Wire types.

// message is a WeixinMessage.
type message struct {
	Seq          flexID        `json:"seq,omitempty"`
	MessageID    flexID        `json:"message_id,omitempty"`
	FromUserID   string        `json:"from_user_id"`
	ToUserID     string        `json:"to_user_id"`
	ClientID     string        `json:"client_id,omitempty"`
	CreateTimeMS flexInt       `json:"create_time_ms,omitempty"`
	MessageType  flexInt       `json:"message_type"`
	MessageState flexInt       `json:"message_state,omitempty"`
	ItemList     []messageItem `json:"item_list,omitempty"`
	ContextToken string        `json:"context_token,omitempty"`
}

// messageItem is one piece of a message: text or a medium.
type messageItem struct {
	Type      int        `json:"type"`
	TextItem  *textItem  `json:"text_item,omitempty"`
	ImageItem *mediaItem `json:"image_item,omitempty"`
	VoiceItem *mediaItem `json:"voice_item,omitempty"`
	FileItem  *mediaItem `json:"file_item,omitempty"`
	VideoItem *mediaItem `json:"video_item,omitempty"`
	RefMsg    *refMsg    `json:"ref_msg,omitempty"`
}

type textItem struct {
	Text string `json:"text"`
}

// mediaItem is an image, voice, file or video item.
type mediaItem struct {
	Media *cdnMedia `json:"media,omitempty"`
	// AESKey is an image's key as 32 hex characters.
	AESKey   string `json:"aeskey,omitempty"`
	Text     string `json:"text,omitempty"`      // a voice's transcript
	FileName string `json:"file_name,omitempty"` // a file's name
}

// cdnMedia locates an encrypted file on the CDN.
type cdnMedia struct {
	EncryptQueryParam string `json:"encrypt_query_param,omitempty"`
	// AESKey is base64 of the 16 key bytes, or of their 32 hex characters.
	AESKey  string `json:"aes_key,omitempty"`
	FullURL string `json:"full_url,omitempty"`
}

// refMsg is the message a text quotes.
type refMsg struct {
	Title       string       `json:"title,omitempty"`
	MessageItem *messageItem `json:"message_item,omitempty"`
}

// updates is getupdates' answer.
type updates struct {
	Msgs                 []json.RawMessage `json:"msgs"`
	GetUpdatesBuf        string            `json:"get_updates_buf"`
	LongpollingTimeoutMS int               `json:"longpolling_timeout_ms"`
}

// qrCode is get_bot_qrcode's answer.
type qrCode struct {
	QRCode           string `json:"qrcode"`
	QRCodeImgContent string `json:"qrcode_img_content"`
}

// qrStatus is get_qrcode_status' answer.
type qrStatus struct {
	Status       string `json:"status"`
	BotToken     string `json:"bot_token"`
	BotID        string `json:"ilink_bot_id"`
	BaseURL      string `json:"baseurl"`
	UserID       string `json:"ilink_user_id"`
	RedirectHost string `json:"redirect_host"`
}
