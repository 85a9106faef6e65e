package governance

import (
	"fmt"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/session"
)

// microcompact replaces big results of compactable tools, oldest first,
// until the messages fit in 0.85 × budget; it does nothing when they fit.
func microcompact(msgs []chat.Message, budget int, count session.Counter) []chat.Message {
	total := Tokens(msgs, count)
	if total <= budget {
		return msgs
	}
	target := int(float64(budget) * InflightCompactTarget)
	for i := range msgs {
		if total <= target {
			break
		}
		m := msgs[i]
		if m.Role != chat.RoleTool || len(m.Content) < MicrocompactMinChars || !CompactableTools[m.Name] {
			continue
		}
		before := count(m)
		msgs[i].Content = fmt.Sprintf(compactedTextFormat, m.Name)
		total -= before - count(msgs[i])
	}
	return msgs
}

// snipHistory keeps the system messages and the newest messages that fit,
// starting at a user message; it does nothing when everything fits.
func snipHistory(msgs []chat.Message, budget int, count session.Counter) []chat.Message {
	if Tokens(msgs, count) <= budget {
		return msgs
	}
	var system, rest []chat.Message
	for _, m := range msgs {
		if m.Role == chat.RoleSystem {
			system = append(system, m)
		} else {
			rest = append(rest, m)
		}
	}
	left := budget - Tokens(system, count)
	start := len(rest)
	for start > 0 && left-count(rest[start-1]) >= 0 {
		left -= count(rest[start-1])
		start--
	}
	for start < len(rest) && rest[start].Role != chat.RoleUser {
		start++
	}
	if start == len(rest) {
		// Not even the newest exchange fits: keep the last user message onward.
		for start = len(rest) - 1; start > 0 && rest[start].Role != chat.RoleUser; start-- {
		}
	}
	return append(system, rest[start:]...)
}
