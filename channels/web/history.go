package web

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/nanobot-durable/nanobot/channels/markdown"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/tools"
)

// maxListed bounds the session list (newest first).
const maxListed = 100

// hintMax bounds a tool hint's argument, as the live hints are.
const hintMax = 40

// sessionItem is one web session in the list.
type sessionItem struct {
	Chat    string `json:"chat"`
	Title   string `json:"title"`
	Updated string `json:"updated"`
}

// item is one line of a conversation as the page draws it: a user or
// assistant message, or a tool progress line ("hint").
type item struct {
	Role    string `json:"role"`
	Text    string `json:"text"`
	HTML    string `json:"html,omitempty"` // an answer's Markdown rendered (markdown.WebHTML)
	Turn    string `json:"turn,omitempty"`
	Command bool   `json:"command,omitempty"`
}

// sessions lists the web sessions, newest first, with their first line.
func (c *Channel) sessions(ctx context.Context) ([]sessionItem, error) {
	infos, err := c.store.Sessions()
	if err != nil {
		return nil, err
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Modified.After(infos[j].Modified) })
	out := []sessionItem{}
	for _, in := range infos {
		ch, chatID, err := protocol.SplitSessionKey(in.Key)
		if err != nil || ch != Name {
			continue
		}
		s, err := c.store.Load(ctx, in.Key)
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", in.Key, err)
		}
		title := ""
		for _, m := range s.Messages {
			if m.Role == chat.RoleUser && !m.Command && strings.TrimSpace(m.Content) != "" {
				title, _, _ = strings.Cut(strings.TrimSpace(m.Content), "\n")
				title = chat.Preview(title, 80)
				break
			}
		}
		out = append(out, sessionItem{Chat: chatID, Title: title, Updated: in.Modified.UTC().Format("2006-01-02T15:04:05Z")})
		if len(out) == maxListed {
			break
		}
	}
	return out, nil
}

// history is a conversation from the journal: what was said, and the
// tool calls as the progress lines they were shown as.
func (c *Channel) history(ctx context.Context, key string) ([]item, error) {
	s, err := c.store.Load(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", key, err)
	}
	out := []item{}
	for _, m := range s.Messages {
		switch m.Role {
		case chat.RoleUser:
			out = append(out, item{Role: "user", Text: m.Content, Turn: m.Turn, Command: m.Command})
		case chat.RoleAssistant:
			for _, tc := range m.ToolCalls {
				if h := tools.Hint(tc.Function.Name, tc.Function.Arguments, hintMax); h != "" {
					out = append(out, item{Role: "hint", Text: h, Turn: m.Turn})
				}
			}
			if strings.TrimSpace(m.Content) != "" {
				out = append(out, item{Role: "assistant", Text: m.Content, HTML: markdown.WebHTML(m.Content), Turn: m.Turn, Command: m.Command})
			}
		}
	}
	return out, nil
}
