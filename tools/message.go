package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/nanobot-durable/nanobot/protocol"
)

// MessageSender delivers a message to a chat; the channel layer implements
// it (the tool itself cannot reach any channel). env carries the session and
// the call ID, which makes a retried send idempotent. A send that cannot be
// delivered yet (the channel's gateway is down) is queued, not failed:
// queued reports it.
type MessageSender interface {
	SendMessage(ctx context.Context, env Env, to protocol.Route, content string, media []string) (queued bool, err error)
}

const messageDescription = "Send a message to the user on a chat channel, e.g. to report progress before the final answer " +
	"or to deliver a file. Without channel and chat_id it goes to the current conversation. " +
	"media lists files (workspace paths) or http(s) URLs to attach."

const messageParameters = `{
  "type": "object",
  "properties": {
    "content": {"type": "string", "description": "The message content to send"},
    "channel": {"type": "string", "description": "Optional: target channel (telegram, discord, …); default: the current one"},
    "chat_id": {"type": "string", "description": "Optional: target chat/user ID; default: the current one"},
    "media": {"type": "array", "items": {"type": "string"}, "description": "Optional: file paths or URLs to attach"}
  },
  "required": ["content"]
}`

// MessageTool is the message built-in.
type MessageTool struct{ sender MessageSender }

// NewMessageTool builds the message tool around the channel layer's sender.
func NewMessageTool(sender MessageSender) *MessageTool { return &MessageTool{sender: sender} }

func (t *MessageTool) Name() string                { return "message" }
func (t *MessageTool) Description() string         { return messageDescription }
func (t *MessageTool) Parameters() json.RawMessage { return json.RawMessage(messageParameters) }
func (t *MessageTool) Flags() Flags                { return Flags{SideEffects: true} }

func (t *MessageTool) Run(ctx context.Context, env Env, args map[string]any) Result {
	content := StringArg(args, "content")
	to := messageTarget(env.Route, strings.TrimSpace(StringArg(args, "channel")), strings.TrimSpace(StringArg(args, "chat_id")))
	if to.Channel == "" || to.ChatID == "" {
		return ErrorResult("Error: No target channel/chat specified")
	}
	var media []string
	if raw, ok := args["media"].([]any); ok {
		for _, m := range raw {
			item := strings.TrimSpace(fmt.Sprint(m))
			if item == "" {
				continue
			}
			resolved, err := resolveMedia(env, item)
			if err != nil {
				return ErrorResult("Error: media %q: %v", item, err)
			}
			media = append(media, resolved)
		}
	}
	if strings.TrimSpace(content) == "" && len(media) == 0 {
		return ErrorResult("Error: message content is empty")
	}
	if t.sender == nil {
		return ErrorResult("Error: messaging is not available in this context")
	}
	queued, err := t.sender.SendMessage(ctx, env, to, content, media)
	if err != nil {
		return ErrorResult("Error sending message: %v", err)
	}
	msg := fmt.Sprintf("Message sent to %s:%s", to.Channel, to.ChatID)
	if queued {
		msg = fmt.Sprintf("Message queued for %s:%s: its channel is not connected now; it is delivered when a gateway holding it comes back", to.Channel, to.ChatID)
	}
	if len(media) > 0 {
		msg += fmt.Sprintf(" with %d attachment(s)", len(media))
	}
	res := TextResult(msg)
	res.AnsweredOrigin = to.SameChat(env.Route)
	return res
}

// messageTarget is the origin route (thread and reply-to kept) unless the
// model named another chat.
func messageTarget(origin protocol.Route, channel, chatID string) protocol.Route {
	if (channel == "" || channel == origin.Channel) && (chatID == "" || chatID == origin.ChatID) {
		return origin
	}
	if channel == "" {
		channel = origin.Channel
	}
	return protocol.Route{Channel: channel, ChatID: chatID}
}

// resolveMedia passes URLs through and resolves local files, which must exist.
func resolveMedia(env Env, item string) (string, error) {
	lower := strings.ToLower(item)
	if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		return item, nil
	}
	p, err := ResolvePath(env, item)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", errors.New("file not found")
	case err != nil:
		return "", err
	case !fi.Mode().IsRegular():
		return "", errors.New("not a regular file")
	}
	return p, nil
}
