package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/session"
)

const sendSessionMessageDescription = "Send a message to a persisted session by @handle."

const sendSessionMessageParameters = `{
  "type": "object",
  "properties": {
    "to": {"type": "string", "description": "Target @handle."},
    "content": {"type": "string", "description": "Message."},
    "expect_reply": {"type": "boolean", "description": "Notify this session if no reply arrives."},
    "reply_timeout_seconds": {"type": "integer", "minimum": 5, "maximum": 60,
      "description": "Timeout before that notification; required when expect_reply is true."}
  },
  "required": ["to", "content", "expect_reply"]
}`

// Bounds of a reply wait, and the window of the rate limit (nanobot's).
const (
	MinReplyTimeoutSeconds = 5
	MaxReplyTimeoutSeconds = 60
	sessionMessageWindow   = time.Minute
)

// SendSessionMessageTool is send_session_message.
type SendSessionMessageTool struct {
	book SessionBook
	now  func() time.Time
}

// NewSendSessionMessage builds send_session_message over the session book.
func NewSendSessionMessage(book SessionBook) SendSessionMessageTool {
	return SendSessionMessageTool{book: book, now: time.Now}
}

func (SendSessionMessageTool) Name() string        { return "send_session_message" }
func (SendSessionMessageTool) Description() string { return sendSessionMessageDescription }
func (SendSessionMessageTool) Parameters() json.RawMessage {
	return json.RawMessage(sendSessionMessageParameters)
}
func (SendSessionMessageTool) Flags() Flags { return Flags{SideEffects: true} }

func (t SendSessionMessageTool) Run(ctx context.Context, env Env, args map[string]any) Result {
	if env.SessionKey == "" {
		return ErrorResult("Error: session context is unavailable")
	}
	expect := BoolArg(args, "expect_reply", false)
	timeout := IntArg(args, "reply_timeout_seconds", 0)
	if expect && (timeout < MinReplyTimeoutSeconds || timeout > MaxReplyTimeoutSeconds) {
		return ErrorResult("Error: expect_reply=true requires reply_timeout_seconds between %d and %d", MinReplyTimeoutSeconds, MaxReplyTimeoutSeconds)
	}
	if !expect {
		timeout = 0
	}
	name, err := session.NormalizeHandle(StringArg(args, "to"))
	if err != nil {
		return ErrorResult("Error: %v", err)
	}
	handles, err := t.book.Handles(ctx)
	if err != nil {
		return ErrorResult("Error: %v", err)
	}
	target, ok := handleOf(handles, name)
	if !ok {
		return ErrorResult("Error: session @%s was not found", name)
	}
	source, ok := handleFor(handles, env.SessionKey)
	if !ok {
		return ErrorResult("Error: source session was not found")
	}
	if target.Key == source.Key {
		return ErrorResult("Error: session @%s is this session", name)
	}
	limit := t.book.MaxMessagesPerMinute()
	sent, err := t.sentRecently(ctx, env.SessionKey)
	if err != nil {
		return ErrorResult("Error: %v", err)
	}
	if sent >= limit {
		return ErrorResult("Error: session message rate limit reached (%d/minute)", limit)
	}
	msg := SessionMessage{From: source, To: target, Content: StringArg(args, "content"), ExpectReply: expect, TimeoutSeconds: timeout}
	if err := t.book.Deliver(ctx, env, msg); err != nil {
		return ErrorResult("Error: %v", err)
	}
	if expect {
		return TextResult(fmt.Sprintf("Sent to @%s. A timeout notice will arrive after %ds unless it replies.", name, timeout))
	}
	return TextResult(fmt.Sprintf("Sent to @%s.", name))
}

// sentRecently counts this session's sends in the last minute, read from
// its journal: the limit holds across workers and restarts.
func (t SendSessionMessageTool) sentRecently(ctx context.Context, key string) (int, error) {
	sess, err := t.book.Load(ctx, key)
	if err != nil {
		return 0, err
	}
	since := t.now().Add(-sessionMessageWindow)
	n := 0
	for _, m := range sess.Messages {
		if m.Role != chat.RoleTool || m.Name != "send_session_message" || !strings.HasPrefix(m.Content, "Sent to @") {
			continue
		}
		if at, ok := session.MessageTime(m.Timestamp); ok && at.After(since) {
			n++
		}
	}
	return n, nil
}
