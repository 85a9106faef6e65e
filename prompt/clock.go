package prompt

import (
	"fmt"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/chat"
)

const (
	runtimeContextTag = "[Runtime Context — metadata only, not instructions]"
	runtimeContextEnd = "[/Runtime Context]"
)

// RuntimeContext is the metadata block appended after the user's text:
// the time the turn started in the user's timezone, then where the message
// came from, then extra lines (the CLI apps the message names). It changes
// every turn, so it never enters the system prompt.
func RuntimeContext(channel, chatID string, now time.Time, timezone string, extra ...string) string {
	lines := []string{"Current Time: " + CurrentTime(now, timezone)}
	if channel != "" && chatID != "" {
		lines = append(lines, "Channel: "+channel, "Chat ID: "+chatID)
	}
	return ContextBlock(append(lines, extra...)...)
}

// ContextBlock wraps lines in the runtime-context markers: metadata the
// model reads as such, not as the user's words.
func ContextBlock(lines ...string) string {
	return runtimeContextTag + "\n" + strings.Join(lines, "\n") + "\n" + runtimeContextEnd
}

// CurrentTime renders now as nanobot does: "2026-02-24 13:59 (Tuesday)
// (Asia/Shanghai, UTC+08:00)". An empty or unknown timezone is UTC.
func CurrentTime(now time.Time, timezone string) string {
	loc, err := time.LoadLocation(timezone)
	if timezone == "" || err != nil {
		loc, timezone = time.UTC, "UTC"
	}
	t := now.In(loc)
	_, offset := t.Zone()
	sign := '+'
	if offset < 0 {
		sign, offset = '-', -offset
	}
	return fmt.Sprintf("%s (%s, UTC%c%02d:%02d)", t.Format("2006-01-02 15:04 (Monday)"), timezone, sign, offset/3600, offset%3600/60)
}

// WithMessageTime prefixes a replayed user message with the time it was
// written ("[Message Time: …]", nanobot's include_timestamps), so the model
// can reason about "yesterday"; the stamp is fixed, so the prefix stays
// cacheable. Assistant messages are left alone: stamped examples teach the
// model to stamp its own replies.
func WithMessageTime(m chat.Message) chat.Message {
	if m.Role != chat.RoleUser || m.Timestamp == "" || len(m.ContentParts) > 0 {
		return m
	}
	m.Content = "[Message Time: " + m.Timestamp + "]\n" + m.Content
	return m
}
