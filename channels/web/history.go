package web

import (
	"context"
	"fmt"
	"strings"

	"github.com/nanobot-durable/nanobot/channels/markdown"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/tools"
)

// maxListed bounds the sidebar's list (newest first).
const maxListed = 100

// hintMax bounds a tool hint's argument, as the live hints are.
const hintMax = 40

// item is one line of a conversation as the page draws it: a user or
// assistant message, or a tool progress line ("hint").
type item struct {
	Role    string `json:"role"`
	Text    string `json:"text"`
	HTML    string `json:"html,omitempty"` // an answer's Markdown rendered (markdown.WebHTML)
	Turn    string `json:"turn,omitempty"`
	Command bool   `json:"command,omitempty"`
	// Index is the message's place in the journal: where a fork ends.
	Index int `json:"index"`
}

// history is a conversation from the journal: what was said, and the
// tool calls as the progress lines they were shown as.
func (c *Channel) history(ctx context.Context, key string) ([]item, error) {
	s, err := c.store.Load(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", key, err)
	}
	out := []item{}
	for i, m := range s.Messages {
		switch m.Role {
		case chat.RoleUser:
			out = append(out, item{Role: "user", Text: m.Content, Turn: m.Turn, Command: m.Command, Index: i})
		case chat.RoleAssistant:
			for _, tc := range m.ToolCalls {
				if h := tools.Hint(tc.Function.Name, tc.Function.Arguments, hintMax); h != "" {
					out = append(out, item{Role: "hint", Text: h, Turn: m.Turn, Index: i})
				}
			}
			if strings.TrimSpace(m.Content) != "" {
				out = append(out, item{Role: "assistant", Text: m.Content, HTML: markdown.WebHTML(m.Content), Turn: m.Turn, Command: m.Command, Index: i})
			}
		}
	}
	return out, nil
}
