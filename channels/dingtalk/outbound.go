package dingtalk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
)

// maxMessageRunes is the length of one Markdown message sent: DingTalk
// takes about 5000 characters; 4000 keeps room for the group header and
// keeps CJK text under the webhook's byte limit.
const maxMessageRunes = 4000

// replyTitle is the Markdown message's title (the notification's text), as in nanobot.
const replyTitle = "Nanobot Reply"

// The robot send API, one path for direct chats and one for groups.
const (
	dmSendPath    = "/v1.0/robot/oToMessages/batchSend"
	groupSendPath = "/v1.0/robot/groupMessages/send"
)

// senderNameMax bounds the sender's name in a group reply's header.
const senderNameMax = 80

// MaxLength implements channels.PartSender.
func (c *Channel) MaxLength() int { return maxMessageRunes }

// SendPart implements channels.PartSender: text through the message's
// sessionWebhook while it is valid, else (and files always) through the
// robot send API. A group reply's first text part names the sender.
func (c *Channel) SendPart(ctx context.Context, r channels.Reply, p channels.Part) (string, error) {
	if r.Route.ChatID == "" || r.Route.ChatID == groupPrefix {
		return "", &channels.SendError{Err: fmt.Errorf("dingtalk chat id %q names nobody", r.Route.ChatID), Permanent: true}
	}
	if p.Media != "" {
		return c.sendMedia(ctx, r.Route.ChatID, p.Media)
	}
	hook, known := c.hooks.get(r.Route.ReplyTo)
	text := render(p.Text)
	if known && hook.group && hook.nick != "" && p.Index == len(r.Media) {
		text = "# @" + escapeName(hook.nick) + "\n\n" + text
	}
	if known && hook.usable(time.Now(), c.oapi) {
		err := c.sendByWebhook(ctx, hook.url, text)
		if err == nil {
			return "", nil
		}
		var se *channels.SendError
		if errors.As(err, &se) && se.RetryAfter > 0 {
			return "", err
		}
		c.Log.Warn("dingtalk sessionWebhook refused the reply; sending through the robot API", "msg_id", r.Route.ReplyTo, "error", err)
	}
	return c.sendRobot(ctx, r.Route.ChatID, "sampleMarkdown", map[string]string{"title": replyTitle, "text": text})
}

// render turns the model's Markdown into what DingTalk shows.
func render(md string) string { return format.Markdown(md) }

// escapeName writes an untrusted display name as one bounded line that
// cannot open Markdown of its own, as nanobot does.
func escapeName(name string) string {
	name = strings.Join(strings.Fields(name), " ")
	if r := []rune(name); len(r) > senderNameMax {
		name = string(r[:senderNameMax])
	}
	var b strings.Builder
	for _, ch := range name {
		if strings.ContainsRune("\\`*_{}[]()<>#+-.!|~", ch) {
			b.WriteByte('\\')
		}
		b.WriteRune(ch)
	}
	return b.String()
}

// sendByWebhook posts a Markdown message to a message's sessionWebhook
// (no token: the URL is the credential, and is never logged).
func (c *Channel) sendByWebhook(ctx context.Context, hook, text string) error {
	body := map[string]any{"msgtype": "markdown", "markdown": map[string]string{"title": replyTitle, "text": text}}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	webhook := &channels.API{Name: Name + " sessionWebhook", Base: hook, HTTP: c.http, Envelope: readEnvelope, Judge: judge}
	err := webhook.Call(cctx, http.MethodPost, "", body, nil) // the path is not in the error
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = channels.RedactURL(ue.URL)
	}
	return err
}

// robotAnswer is what both send APIs answer; the direct one also lists
// users it could not reach.
type robotAnswer struct {
	ProcessQueryKey           string   `json:"processQueryKey"`
	InvalidStaffIDList        []string `json:"invalidStaffIdList"`
	FlowControlledStaffIDList []string `json:"flowControlledStaffIdList"`
}

// sendRobot sends one message of msgKey through the robot send API with
// the access token: to the user of a direct chat, or to a group.
func (c *Channel) sendRobot(ctx context.Context, chatID, msgKey string, param any) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	raw, err := json.Marshal(param)
	if err != nil {
		return "", err
	}
	body := map[string]any{"robotCode": c.cfg.ClientID, "msgKey": msgKey, "msgParam": string(raw)}
	path := dmSendPath
	if conv, ok := strings.CutPrefix(chatID, groupPrefix); ok {
		path, body["openConversationId"] = groupSendPath, conv
	} else {
		body["userIds"] = []string{chatID}
	}
	var out robotAnswer
	if err := c.rest.Call(cctx, http.MethodPost, path, body, &out); err != nil {
		return "", err
	}
	switch {
	case slices.Contains(out.FlowControlledStaffIDList, chatID):
		return "", &channels.SendError{Err: fmt.Errorf("dingtalk send %s: user %s is flow-controlled", msgKey, chatID), RetryAfter: webhookRetryAfter}
	case slices.Contains(out.InvalidStaffIDList, chatID):
		return "", &channels.SendError{Err: fmt.Errorf("dingtalk send %s: user %s is not a valid staff id", msgKey, chatID), Permanent: true}
	}
	return out.ProcessQueryKey, nil
}
