package dingtalk

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Conversation types of a robot message.
const (
	conversationDM    = "1"
	conversationGroup = "2"
)

// maxContentRunes bounds the text of one message taken in: DingTalk's own
// limit is far below, so more is not a message from DingTalk.
const maxContentRunes = 20000

// robotMessage is the data of a /v1.0/im/bot/messages/get callback
// ("机器人接收消息"): who wrote, where, and what, by msgtype.
type robotMessage struct {
	MsgID             string `json:"msgId"`
	MsgType           string `json:"msgtype"`
	ConversationID    string `json:"conversationId"`
	ConversationType  string `json:"conversationType"`
	ConversationTitle string `json:"conversationTitle"`
	SenderID          string `json:"senderId"`
	SenderStaffID     string `json:"senderStaffId"`
	SenderNick        string `json:"senderNick"`
	ChatbotUserID     string `json:"chatbotUserId"`
	IsInAtList        bool   `json:"isInAtList"`
	AtUsers           []struct {
		DingtalkID string `json:"dingtalkId"`
		StaffID    string `json:"staffId"`
	} `json:"atUsers"`
	SessionWebhook            string `json:"sessionWebhook"`
	SessionWebhookExpiredTime int64  `json:"sessionWebhookExpiredTime"` // ms since the epoch
	CreateAt                  int64  `json:"createAt"`                  // ms since the epoch
	Text                      *struct {
		Content string `json:"content"`
	} `json:"text"`
	// Content is the msgtype's own part (picture, richText, audio, file).
	Content *messageContent `json:"content"`
	// DownloadCode is where some clients put a file's code, beside content.
	DownloadCode string `json:"downloadCode"`
	FileName     string `json:"fileName"`
}

// messageContent is the union of the msgtypes' content objects.
type messageContent struct {
	DownloadCode string `json:"downloadCode"`
	FileName     string `json:"fileName"`
	Recognition  string `json:"recognition"` // audio: DingTalk's transcript
	RichText     []struct {
		Type         string `json:"type"`
		Text         string `json:"text"`
		DownloadCode string `json:"downloadCode"`
		FileName     string `json:"fileName"`
	} `json:"richText"`
}

// sender is who wrote: the staff id nanobot's allowFrom names, else the
// conversation-scoped sender id.
func (m robotMessage) sender() string {
	if m.SenderStaffID != "" {
		return m.SenderStaffID
	}
	return m.SenderID
}

func (m robotMessage) isGroup() bool { return m.ConversationType == conversationGroup }

// chatID is where the answer goes, as nanobot names it: the sender in a
// direct chat, "group:" and the conversation in a group.
func (m robotMessage) chatID() string {
	if m.isGroup() {
		return groupPrefix + m.ConversationID
	}
	return m.sender()
}

// groupPrefix marks a group's chat id.
const groupPrefix = "group:"

// mentionsBot: DingTalk puts the robot in the message's @ list.
func (m robotMessage) mentionsBot() bool {
	if m.IsInAtList {
		return true
	}
	for _, u := range m.AtUsers {
		if m.ChatbotUserID != "" && u.DingtalkID == m.ChatbotUserID {
			return true
		}
	}
	return false
}

// download is a file the message carries, fetched only after admission.
type download struct {
	code, name string
}

// text is what the model reads and the files to fetch: text, richText
// (its marks as Markdown, as nanobot writes them), an audio's transcript,
// a picture or a file.
func (m robotMessage) text() (string, []download) {
	var parts []string
	var files []download
	if m.Text != nil {
		if t := strings.TrimSpace(m.Text.Content); t != "" {
			parts = append(parts, t)
		}
	}
	c := m.Content
	if c == nil {
		c = &messageContent{}
	}
	switch m.MsgType {
	case "picture":
		if c.DownloadCode != "" {
			files = append(files, download{code: c.DownloadCode, name: "image.jpg"})
		}
	case "file", "video":
		code, name := firstOf(c.DownloadCode, m.DownloadCode), firstOf(c.FileName, m.FileName, "file")
		if code != "" {
			files = append(files, download{code: code, name: name})
		}
	case "audio":
		if t := strings.TrimSpace(c.Recognition); t != "" && len(parts) == 0 {
			parts = append(parts, t)
		}
	case "richText":
		for _, item := range c.RichText {
			if t := strings.TrimSpace(item.Text); t != "" {
				parts = append(parts, richMark(item.Type, t))
			}
			if item.DownloadCode != "" {
				name := item.FileName
				if name == "" && item.Type == "picture" {
					name = "image.jpg"
				}
				files = append(files, download{code: item.DownloadCode, name: firstOf(name, "file")})
			}
		}
	}
	return strings.Join(parts, " "), files
}

// richMark writes a richText segment's mark as Markdown.
func richMark(kind, t string) string {
	switch kind {
	case "bold":
		return "**" + t + "**"
	case "italic":
		return "*" + t + "*"
	case "inlineCode":
		return "`" + t + "`"
	case "pre":
		return "```\n" + t + "\n```"
	}
	return t
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// decodeMessage reads a callback's data; a payload DingTalk would not send
// is an error, with the msgId when there is one to log.
func decodeMessage(data string) (robotMessage, string, error) {
	var m robotMessage
	var probe struct {
		MsgID any `json:"msgId"`
	}
	_ = json.Unmarshal([]byte(data), &probe)
	id := "?"
	if probe.MsgID != nil {
		id = fmt.Sprint(probe.MsgID)
	}
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		return m, id, fmt.Errorf("bad robot message: %w", err)
	}
	switch {
	case m.MsgID == "":
		return m, id, errors.New("bad robot message: no msgId")
	case m.sender() == "":
		return m, id, errors.New("bad robot message: no sender")
	case m.ConversationType != conversationDM && m.ConversationType != conversationGroup:
		return m, id, fmt.Errorf("bad robot message: conversationType %q", m.ConversationType)
	case m.isGroup() && m.ConversationID == "":
		return m, id, errors.New("bad robot message: a group message without conversationId")
	}
	if m.Text != nil && utf8.RuneCountInString(m.Text.Content) > maxContentRunes {
		return m, id, fmt.Errorf("bad robot message: text of %d characters", utf8.RuneCountInString(m.Text.Content))
	}
	return m, id, nil
}
