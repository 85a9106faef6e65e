// Package chat holds the message types shared by the session journal, the
// providers and the tools. Their JSON form is nanobot's session format, which
// is also the OpenAI chat-completions message format.
package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Roles of a chat message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one message of a conversation, as nanobot stores it in a
// session's JSONL file. Fields starting with an underscore in JSON are our
// journal bookkeeping; nanobot ignores keys it does not know.
type Message struct {
	Role             string     `json:"role"`
	Content          string     `json:"-"`
	ContentParts     []byte     `json:"-"` // raw multimodal content (a JSON array), kept for round trips
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string     `json:"tool_call_id,omitempty"`
	Name             string     `json:"name,omitempty"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	// ThinkingBlocks are Anthropic's signed thinking blocks of an assistant
	// reply (nanobot's thinking_blocks), replayed verbatim in a tool loop.
	ThinkingBlocks json.RawMessage `json:"thinking_blocks,omitempty"`
	Timestamp      string          `json:"timestamp,omitempty"`
	LatencyMS      int64           `json:"latency_ms,omitempty"`
	FinishReason   string          `json:"finish_reason,omitempty"`

	// Journal bookkeeping: the turn that wrote the entry and its ID inside
	// that turn, which together make appends idempotent.
	Turn    string `json:"_turn,omitempty"`
	EntryID string `json:"_id,omitempty"`
	Command bool   `json:"_command,omitempty"`
}

// ToolCall is an assistant's request to run one tool (OpenAI wire shape).
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the tool and carries its JSON-encoded arguments.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolDefinition describes a tool to the model (OpenAI "function" tool).
type ToolDefinition struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

type messageAlias Message

type messageWire struct {
	*messageAlias
	Content json.RawMessage `json:"content"`
}

// MarshalJSON writes content as a string, or as the raw array when the
// message carried multimodal parts.
func (m Message) MarshalJSON() ([]byte, error) {
	w := messageWire{messageAlias: (*messageAlias)(&m)}
	switch {
	case len(m.ContentParts) > 0:
		w.Content = m.ContentParts
	case m.Content == "" && m.Role == RoleAssistant && len(m.ToolCalls) > 0:
		w.Content = json.RawMessage("null")
	default:
		b, err := json.Marshal(m.Content)
		if err != nil {
			return nil, err
		}
		w.Content = b
	}
	return json.Marshal(w)
}

// UnmarshalJSON accepts content as a string, null, or an array of parts
// (whose text parts become Content).
func (m *Message) UnmarshalJSON(data []byte) error {
	w := messageWire{messageAlias: (*messageAlias)(m)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	raw := bytes.TrimSpace(w.Content)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		m.Content = ""
	case raw[0] == '"':
		if err := json.Unmarshal(raw, &m.Content); err != nil {
			return fmt.Errorf("content: %w", err)
		}
	case raw[0] == '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(raw, &parts); err != nil {
			return fmt.Errorf("content parts: %w", err)
		}
		m.ContentParts = append([]byte(nil), raw...)
		var text bytes.Buffer
		for _, p := range parts {
			if p.Type == "text" {
				if text.Len() > 0 {
					text.WriteString("\n")
				}
				text.WriteString(p.Text)
			}
		}
		m.Content = text.String()
	default:
		return fmt.Errorf("content: want a string or an array, got %.20s", raw)
	}
	return nil
}

// Preview cuts s to at most n bytes on a rune boundary, marking the cut.
func Preview(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	return Cut(s, n-len(mark)) + mark
}

// Cut returns the longest prefix of s of at most n bytes that ends on a rune boundary.
func Cut(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:max(n, 0)]
}
