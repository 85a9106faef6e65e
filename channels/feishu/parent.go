package feishu

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// replyContextMax bounds the quoted parent's text (nanobot's 200 characters).
const replyContextMax = 200

// replyContext is "[Reply to: …]" for a message that answers another: the
// parent's text, fetched with GET /open-apis/im/v1/messages/{id} (text,
// post and card messages); "" when there is none to show.
func (c *Channel) replyContext(ctx context.Context, parentID string) string {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var got struct {
		Items []struct {
			MsgType string `json:"msg_type"`
			Body    struct {
				Content string `json:"content"`
			} `json:"body"`
		} `json:"items"`
	}
	err := c.api.call(cctx, request{op: "get message", method: http.MethodGet, path: "/open-apis/im/v1/messages/" + url.PathEscape(parentID)}, &got)
	if err != nil {
		c.Log.Debug("feishu parent message not fetched", "message_id", parentID, "error", err)
		return ""
	}
	if len(got.Items) == 0 {
		return ""
	}
	var body map[string]any
	if json.Unmarshal([]byte(got.Items[0].Body.Content), &body) != nil {
		return ""
	}
	var text string
	switch got.Items[0].MsgType {
	case "text":
		text, _ = body["text"].(string)
	case "post":
		text, _ = flattenPost(body)
	case "interactive": // the bot's own answer, most often
		text = strings.ReplaceAll(cardText(body), "\n", " ")
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return ""
	}
	if utf8.RuneCountInString(text) > replyContextMax {
		text = string([]rune(text)[:replyContextMax]) + "..."
	}
	return "[Reply to: " + text + "]"
}
