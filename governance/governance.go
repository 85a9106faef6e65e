// Package governance shapes the messages sent to the model so they fit the
// context window and obey the API's rules, in nanobot's order. It works on
// a copy: the journal is never rewritten.
package governance

import (
	"strings"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/tokens"
)

// nanobot's constants.
const (
	SnipSafetyBuffer      = 1024
	MicrocompactMinChars  = 500
	InflightCompactTarget = 0.85
	BackfillText          = "[Tool result unavailable — call was interrupted or lost]"
	ModelErrorPlaceholder = "[Assistant reply unavailable due to model error.]"
	truncatedMarker       = "\n... (truncated)"
	compactedTextFormat   = "Error: The previous %s result was compacted to fit context. Call the tool again if you still need it."
)

// CompactableTools are the tools whose old results may be compacted away.
var CompactableTools = map[string]bool{
	"read_file": true, "exec": true, "grep": true, "find_files": true,
	"web_search": true, "web_fetch": true, "list_dir": true, "list_exec_sessions": true,
}

// Options bound what Prepare may send.
type Options struct {
	// Budget is the input token budget: context window − max tokens − 1024.
	Budget int
	// MaxToolResultChars caps one tool result (0 = no cap).
	MaxToolResultChars int
	// Count counts a message's tokens; nil counts with the default encoding.
	Count session.Counter
}

// Budget is nanobot's input budget for a model call.
func Budget(contextWindow, maxTokens int) int {
	return contextWindow - maxTokens - SnipSafetyBuffer
}

// InputBudget is Budget with a floor, so a misconfigured window still
// leaves room for the current message: what consolidation holds a prompt to.
func InputBudget(contextWindow, maxTokens int) int {
	return max(Budget(contextWindow, maxTokens), 1024)
}

// HistoryTokens is what a session's replayed history costs (count nil: the
// default encoding): the measure /status, COMPACT and the web chat show.
func HistoryTokens(s *session.Session, count session.Counter) int {
	return Tokens(s.History(0, nil), count)
}

// Prepare returns the messages to send, governed in nanobot's order.
func Prepare(msgs []chat.Message, opts Options) []chat.Message {
	out := append([]chat.Message(nil), msgs...)
	out = stripPlaceholders(out)
	out = stripMalformedCalls(out)
	out = dropOrphanResults(out)
	out = backfillMissingResults(out)
	out = capToolResults(out, opts.MaxToolResultChars)
	if opts.Budget > 0 {
		count := opts.Count
		if count == nil {
			count = tokens.For("").Message
		}
		out = microcompact(out, opts.Budget, count)
		out = snipHistory(out, opts.Budget, count)
	}
	out = dropOrphanResults(out)
	return backfillMissingResults(out)
}

// Tokens counts messages with count (nil: the default encoding).
func Tokens(msgs []chat.Message, count session.Counter) int {
	if count == nil {
		count = tokens.For("").Message
	}
	n := 0
	for _, m := range msgs {
		n += count(m)
	}
	return n
}

func stripPlaceholders(msgs []chat.Message) []chat.Message {
	out := msgs[:0:0]
	for _, m := range msgs {
		if m.Role == chat.RoleAssistant && len(m.ToolCalls) == 0 && strings.TrimSpace(m.Content) == ModelErrorPlaceholder {
			continue
		}
		out = append(out, m)
	}
	return out
}

func stripMalformedCalls(msgs []chat.Message) []chat.Message {
	out := msgs[:0:0]
	for _, m := range msgs {
		if m.Role == chat.RoleAssistant && len(m.ToolCalls) > 0 {
			var calls []chat.ToolCall
			for _, c := range m.ToolCalls {
				if strings.TrimSpace(c.ID) != "" && strings.TrimSpace(c.Function.Name) != "" {
					calls = append(calls, c)
				}
			}
			m.ToolCalls = calls
			if len(calls) == 0 && strings.TrimSpace(m.Content) == "" && len(m.ContentParts) == 0 {
				continue
			}
		}
		out = append(out, m)
	}
	return out
}

// dropOrphanResults removes tool results no earlier assistant asked for
// (or asked for and already got).
func dropOrphanResults(msgs []chat.Message) []chat.Message {
	open := map[string]bool{}
	out := msgs[:0:0]
	for _, m := range msgs {
		switch m.Role {
		case chat.RoleAssistant:
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
		case chat.RoleTool:
			if !open[m.ToolCallID] {
				continue
			}
			delete(open, m.ToolCallID)
		}
		out = append(out, m)
	}
	return out
}

// backfillMissingResults answers every call that has no result, right
// after the results its assistant message did get.
func backfillMissingResults(msgs []chat.Message) []chat.Message {
	out := make([]chat.Message, 0, len(msgs))
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		out = append(out, m)
		if m.Role != chat.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		have := map[string]bool{}
		j := i + 1
		for ; j < len(msgs) && msgs[j].Role == chat.RoleTool; j++ {
			have[msgs[j].ToolCallID] = true
			out = append(out, msgs[j])
		}
		for _, c := range m.ToolCalls {
			if !have[c.ID] {
				out = append(out, chat.Message{Role: chat.RoleTool, ToolCallID: c.ID, Name: c.Function.Name, Content: BackfillText})
			}
		}
		i = j - 1
	}
	return out
}

// budgetExempt tools cap their own output (read_file: 128 000 chars), as in nanobot.
var budgetExempt = map[string]bool{"read_file": true}

func capToolResults(msgs []chat.Message, limit int) []chat.Message {
	if limit <= 0 {
		return msgs
	}
	for i, m := range msgs {
		if m.Role == chat.RoleTool && len(m.Content) > limit && !budgetExempt[m.Name] {
			msgs[i].Content = chat.Cut(m.Content, limit) + truncatedMarker
		}
	}
	return msgs
}
