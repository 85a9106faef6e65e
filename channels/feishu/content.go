package feishu

import (
	"encoding/json"
	"strings"
)

// resource is a file a message carries, downloaded after admission.
type resource struct {
	Kind string // the message type: image, file, audio, media
	Key  string // image_key or file_key
	Name string // file_name, when the message has one
}

// placeholders stand for message types the model cannot read (nanobot's MSG_TYPE_MAP).
var placeholders = map[string]string{
	"sticker":              "[sticker]",
	"share_chat":           "[shared chat]",
	"share_user":           "[shared user]",
	"share_calendar_event": "[shared calendar event]",
	"system":               "[system message]",
	"merge_forward":        "[merged forward messages]",
}

// content is the message as text for the model, and the files to fetch.
func (c *Channel) content(m messageEvent) (string, []resource) {
	msg := m.Message
	var body map[string]any
	_ = json.Unmarshal([]byte(msg.Content), &body) // a broken body reads as empty
	str := func(k string) string { s, _ := body[k].(string); return s }
	switch msg.MessageType {
	case "text":
		return c.text(str("text"), msg.Mentions), nil
	case "post":
		text, images := flattenPost(body)
		var rs []resource
		for _, k := range images {
			rs = append(rs, resource{Kind: "image", Key: k})
		}
		return text, rs
	case "image":
		if k := str("image_key"); k != "" {
			return "", []resource{{Kind: "image", Key: k}}
		}
		return "[image: missing image_key]", nil
	case "file", "audio", "media":
		if k := str("file_key"); k != "" {
			return "", []resource{{Kind: msg.MessageType, Key: k, Name: str("file_name")}}
		}
		return "[" + msg.MessageType + ": missing file_key]", nil
	case "share_chat":
		return "[shared chat: " + str("chat_id") + "]", nil
	case "share_user":
		return "[shared user: " + str("user_id") + "]", nil
	case "interactive":
		if text := cardText(body); text != "" {
			return text, nil
		}
		return "[interactive]", nil
	}
	if p, ok := placeholders[msg.MessageType]; ok {
		return p, nil
	}
	return "[" + msg.MessageType + "]", nil
}

// flattenPost is a rich-text message as nanobot reads it: the title and
// the text, link, mention and code elements joined by spaces, and the
// keys of its images. The post is direct ({title, content}), localised
// ({zh_cn: {…}}) or wrapped ({post: {zh_cn: {…}}}).
func flattenPost(root map[string]any) (string, []string) {
	if p, ok := root["post"].(map[string]any); ok {
		root = p
	}
	if _, ok := root["content"]; ok {
		if text, imgs := postBlock(root); text != "" || len(imgs) > 0 {
			return text, imgs
		}
	}
	for _, locale := range []string{"zh_cn", "en_us", "ja_jp"} {
		if b, ok := root[locale].(map[string]any); ok {
			if text, imgs := postBlock(b); text != "" || len(imgs) > 0 {
				return text, imgs
			}
		}
	}
	for _, v := range root {
		if b, ok := v.(map[string]any); ok {
			if text, imgs := postBlock(b); text != "" || len(imgs) > 0 {
				return text, imgs
			}
		}
	}
	return "", nil
}

func postBlock(b map[string]any) (string, []string) {
	rows, ok := b["content"].([]any)
	if !ok {
		return "", nil
	}
	var texts, images []string
	if t, ok := b["title"].(string); ok && t != "" {
		texts = append(texts, t)
	}
	for _, row := range rows {
		items, _ := row.([]any)
		for _, it := range items {
			el, _ := it.(map[string]any)
			str := func(k string) string { s, _ := el[k].(string); return s }
			switch str("tag") {
			case "text", "a":
				texts = append(texts, str("text"))
			case "at":
				name := str("user_name")
				if name == "" {
					name = "user"
				}
				texts = append(texts, "@"+name)
			case "code_block":
				texts = append(texts, "\n```"+str("language")+"\n"+str("text")+"\n```\n")
			case "img":
				if k := str("image_key"); k != "" {
					images = append(images, k)
				}
			}
		}
	}
	return strings.TrimSpace(strings.Join(texts, " ")), images
}
