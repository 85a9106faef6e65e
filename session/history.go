package session

import (
	"github.com/nanobot-durable/nanobot/chat"
)

// recentFloor is how many recent messages replay even when consolidated.
const recentFloor = 8

// Counter counts one message's tokens (tokens.Counter.Message).
type Counter func(chat.Message) int

// History returns the messages to replay to the model, following nanobot's
// get_history: from last_consolidated (but never fewer than the recent
// floor), starting at a user message, without command rows or empty
// assistant messages, trimmed from the oldest end to fit budget tokens as
// count counts them (budget <= 0: no trimming, count may be nil).
func (s *Session) History(budget int, count Counter) []chat.Message {
	msgs := s.Messages
	start := len(msgs) - recentFloor
	if start < 0 {
		start = 0
	}
	for start > 0 && msgs[start].Role != chat.RoleUser {
		start--
	}
	if s.LastConsolidated < start {
		start = s.LastConsolidated
	}
	var out []chat.Message
	for _, m := range msgs[start:] {
		if m.Command {
			continue
		}
		if m.Role == chat.RoleAssistant && m.Content == "" && len(m.ToolCalls) == 0 && len(m.ContentParts) == 0 {
			continue
		}
		if len(out) == 0 && m.Role != chat.RoleUser {
			continue // replay starts at a user message: no leading orphans
		}
		out = append(out, m)
	}
	if budget <= 0 {
		return out
	}
	total := 0
	for _, m := range out {
		total += count(m)
	}
	// Drop whole user-led exchanges from the front; the newest user message always stays.
	for total > budget {
		next := -1
		for i := 1; i < len(out); i++ {
			if out[i].Role == chat.RoleUser {
				next = i
				break
			}
		}
		if next < 0 {
			break
		}
		for _, m := range out[:next] {
			total -= count(m)
		}
		out = out[next:]
	}
	return out
}

// ReplayFloor is where History starts regardless of last_consolidated: the
// last recentFloor messages, moved back to a user message.
func ReplayFloor(msgs []chat.Message) int {
	start := max(len(msgs)-recentFloor, 0)
	for start > 0 && msgs[start].Role != chat.RoleUser {
		start--
	}
	return start
}

// Unarchived are the messages since the last consolidation that an archive
// would take: the conversation, without the commands kept beside it.
func (s *Session) Unarchived() []chat.Message {
	var out []chat.Message
	for _, m := range s.Messages[min(s.LastConsolidated, len(s.Messages)):] {
		if !m.Command {
			out = append(out, m)
		}
	}
	return out
}

// ModelPresetKey is where a session's /model choice lives in its metadata.
const ModelPresetKey = "model_preset"

// ModelPreset is the modelPresets entry the session switched to ("": the default).
func (s *Session) ModelPreset() string {
	name, _ := s.Metadata[ModelPresetKey].(string)
	return name
}
